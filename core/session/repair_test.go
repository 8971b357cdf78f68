package session

import (
	"os"
	"reflect"
	"testing"

	"reasonix/core/provider"
)

func TestRepair(t *testing.T) {
	t.Parallel()
	user := provider.Message{Role: provider.RoleUser, Content: "go"}
	calls := provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
		{ID: "a", Name: "bash"}, {ID: "b", Name: "ls"},
	}}
	res := func(id, name, out string) provider.Message {
		return provider.Message{Role: provider.RoleTool, ToolCallID: id, Name: name, Content: out}
	}
	tests := []struct {
		name  string
		msgs  []provider.Message
		added []provider.Message
	}{
		{"empty", nil, nil},
		{"ends with a user message", []provider.Message{user}, nil},
		{"all calls answered", []provider.Message{user, calls, res("a", "bash", "x"), res("b", "ls", "y")}, nil},
		{"killed before any result", []provider.Message{user, calls},
			[]provider.Message{res("a", "bash", InterruptedResult), res("b", "ls", InterruptedResult)}},
		{"killed after one result", []provider.Message{user, calls, res("b", "ls", "y")},
			[]provider.Message{res("a", "bash", InterruptedResult)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := append([]provider.Message(nil), tt.msgs...)
			repaired, added := Repair(in)
			if !reflect.DeepEqual(added, tt.added) {
				t.Fatalf("added = %+v, want %+v", added, tt.added)
			}
			want := append(append([]provider.Message(nil), tt.msgs...), tt.added...)
			if len(repaired) != len(want) || len(want) > 0 && !reflect.DeepEqual(repaired, want) {
				t.Fatalf("repaired = %+v, want %+v", repaired, want)
			}
			if !reflect.DeepEqual(in, tt.msgs) {
				t.Fatal("Repair changed its input")
			}
			if open := OpenCalls(repaired); len(open) != 0 {
				t.Fatalf("calls still open after repair: %+v", open)
			}
			if again, more := Repair(repaired); len(more) != 0 || len(again) != len(repaired) {
				t.Fatalf("second repair added %+v", more)
			}
		})
	}
}

// TestResumeRecordsRepairOnce follows the resume path twice on a
// transcript cut off in the middle of a tool call: the first resume
// appends the interrupted results, the second finds nothing to add.
func TestResumeRecordsRepairOnce(t *testing.T) {
	t.Parallel()
	s, err := Create(t.TempDir(), Header{ID: "cut"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []provider.Message{
		{Role: provider.RoleUser, Content: "run it"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"sleep 100"}`}}},
	} {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The kill also tore the record that was being written.
	f, err := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"message","message":{"ro`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	resume := func() (int, *Warning) {
		t.Helper()
		_, msgs, warn, err := Load(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		_, added := Repair(msgs)
		st, err := Reopen(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range added {
			if err := st.Append(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return len(added), warn
	}
	if n, warn := resume(); n != 1 || warn == nil {
		t.Fatalf("first resume added %d, warning %v; want 1 and a warning", n, warn)
	}
	if n, warn := resume(); n != 0 || warn != nil {
		t.Fatalf("second resume added %d, warning %v; want nothing", n, warn)
	}
	_, msgs, _, err := Load(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[2].ToolCallID != "c1" || msgs[2].Content != InterruptedResult {
		t.Fatalf("transcript = %+v", msgs)
	}
}
