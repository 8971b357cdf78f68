package session

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
)

// TestLoadReplaysCompactions: a transcript with compaction records loads
// as the compacted list the session had, and keeps the originals in the
// file.
func TestLoadReplaysCompactions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Create(dir, Header{ID: NewID(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []provider.Message{
		{Role: provider.RoleSystem, Content: "sys"},
		{Role: provider.RoleUser, Content: "fact: blue"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "ls", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "c1", Content: "ORIGINAL-RESULT"},
		{Role: provider.RoleAssistant, Content: "done"},
	}
	for _, m := range msgs {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	edit := compact.Compaction{Tier: compact.TierPrune, Messages: len(msgs), Edits: []compact.Edit{{Index: 3, Content: compact.Pruned(15)}}}
	want, err := edit.Apply(msgs)
	if err != nil {
		t.Fatal(err)
	}
	fold := compact.Compaction{Tier: compact.TierFold, Messages: len(want), Fold: &compact.Fold{From: 1, To: 5, Keep: []int{1},
		Digest: provider.Message{Role: provider.RoleUser, Content: compact.DigestPrefix + "listed"}}}
	if want, err = fold.Apply(want); err != nil {
		t.Fatal(err)
	}
	want = append(want, provider.Message{Role: provider.RoleUser, Content: "next"})
	for _, step := range []func() error{
		func() error { return s.AppendCompaction(edit) },
		func() error { return s.AppendCompaction(fold) },
		func() error { return s.Append(want[len(want)-1]) },
		s.Close,
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	_, got, warn, err := Load(s.Path())
	if err != nil || warn != nil {
		t.Fatal(err, warn)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded\n%+v\nwant\n%+v", got, want)
	}
	raw, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(raw), "ORIGINAL-RESULT") {
		t.Fatal("the original result is gone from the transcript")
	}
}

// TestLoadRefusesMisfitCompaction: a compaction made for another list is
// an error naming the line, not a silently different conversation.
func TestLoadRefusesMisfitCompaction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Create(dir, Header{ID: NewID(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Append(provider.Message{Role: provider.RoleSystem, Content: "sys"})
	_ = s.AppendCompaction(compact.Compaction{Tier: compact.TierPrune, Messages: 7})
	_ = s.Append(provider.Message{Role: provider.RoleUser, Content: "x"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Load(s.Path()); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v, want one naming line 3", err)
	}
}
