package event

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reasonix/core/mcp"
)

func TestDecodeCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, line string
		want       Command
	}{
		{"prompt queues by default", `{"type":"prompt","text":"hi"}`, &PromptCmd{Text: "hi", Queue: true}},
		{"prompt queue false", `{"type":"prompt","text":"hi","queue":false}`, &PromptCmd{Text: "hi"}},
		{"prompt queue true", `{"queue":true,"text":"hi","type":"prompt"}`, &PromptCmd{Text: "hi", Queue: true}},
		{"surrounding space", " \t{\"type\":\"cancel\"}\r\n", &CancelCmd{}},
		{"cancel", `{"type":"cancel"}`, &CancelCmd{}},
		{"cancel_task", `{"type":"cancel_task","id":"f1.2"}`, &CancelTaskCmd{ID: "f1.2"}},
		{"send_message", `{"type":"send_message","to":"logs","text":"look at 404s"}`, &SendMessageCmd{To: "logs", Text: "look at 404s"}},
		{"approve once", `{"type":"approve","id":"s1/c1","decision":"once"}`, &ApproveCmd{ID: "s1/c1", Decision: ApproveOnce}},
		{"approve always with rule", `{"type":"approve","id":"s1/c1","decision":"always","rule":"Bash(make:*)"}`,
			&ApproveCmd{ID: "s1/c1", Decision: ApproveAlways, Rule: "Bash(make:*)"}},
		{"approve deny empty rule", `{"type":"approve","id":"s1/c1","decision":"deny","rule":""}`, &ApproveCmd{ID: "s1/c1", Decision: ApproveDeny}},
		{"elicitation accept", `{"type":"elicitation","id":"my-srv-3","action":"accept","content":{"name":"Ada","n":2,"ok":true}}`,
			&ElicitationCmd{ID: "my-srv-3", Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada", "n": 2.0, "ok": true}}},
		{"elicitation empty content is none", `{"type":"elicitation","id":"t-1","action":"accept","content":{}}`,
			&ElicitationCmd{ID: "t-1", Action: mcp.ElicitAccept}},
		{"elicitation decline", `{"type":"elicitation","id":"t-1","action":"decline"}`, &ElicitationCmd{ID: "t-1", Action: mcp.ElicitDecline}},
		{"set_posture", `{"type":"set_posture","posture":"yolo"}`, &SetPostureCmd{Posture: "yolo"}},
		{"set_effort", `{"type":"set_effort","effort":"high"}`, &SetEffortCmd{Effort: "high"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCommand([]byte(tc.line))
			if err != nil {
				t.Fatalf("DecodeCommand(%s): %v", tc.line, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("DecodeCommand(%s) = %#v, want %#v", tc.line, got, tc.want)
			}
		})
	}
}

func TestDecodeCommandErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, line string
		// want are substrings the error must hold.
		want []string
	}{
		{"empty line", ``, []string{"empty line"}},
		{"not json", `prompt hi`, []string{"invalid JSON"}},
		{"not an object", `["prompt"]`, []string{"want a JSON object"}},
		{"truncated", `{"type":"prompt","text":"hi"`, []string{"invalid JSON"}},
		{"two values", `{"type":"cancel"} {"type":"cancel"}`, []string{"more than one JSON value"}},
		{"no type", `{"text":"hi"}`, []string{`missing "type"`, "prompt, cancel, cancel_task, approve, elicitation, set_posture"}},
		{"type not a string", `{"type":1}`, []string{`"type" must be a string`}},
		{"type null", `{"type":null}`, []string{`"type" must be a string`}},
		{"unknown type", `{"type":"run"}`, []string{`unknown type "run"`, "prompt, cancel, cancel_task, approve, elicitation, set_posture"}},
		{"type case matters", `{"type":"Prompt","text":"hi"}`, []string{`unknown type "Prompt"`}},
		{"field case matters", `{"type":"prompt","Text":"hi"}`, []string{`unknown field "Text"`, "text, queue"}},
		{"type key case matters", `{"TYPE":"cancel"}`, []string{`missing "type"`}},
		{"unknown field", `{"type":"prompt","text":"hi","model":"x"}`, []string{"prompt command", `unknown field "model"`}},
		{"field of a fieldless command", `{"type":"cancel","id":"x"}`, []string{`unknown field "id"`, "none"}},
		{"duplicate field", `{"type":"prompt","text":"a","text":"b"}`, []string{`"text" given twice`}},
		{"duplicate type", `{"type":"cancel","type":"prompt"}`, []string{`"type" given twice`}},
		{"missing text", `{"type":"prompt"}`, []string{`missing "text"`}},
		{"empty text", `{"type":"prompt","text":""}`, []string{`"text" is empty`}},
		{"blank text", `{"type":"prompt","text":" \n\t"}`, []string{`"text" is empty`}},
		{"text not a string", `{"type":"prompt","text":3}`, []string{`"text" must be a string`}},
		{"text null", `{"type":"prompt","text":null}`, []string{`"text" must be a string`}},
		{"queue not a bool", `{"type":"prompt","text":"hi","queue":"no"}`, []string{`"queue" must be true or false`}},
		{"queue null", `{"type":"prompt","text":"hi","queue":null}`, []string{`"queue" must be true or false`}},
		{"cancel_task without id", `{"type":"cancel_task"}`, []string{"cancel_task command", `missing "id"`}},
		{"cancel_task empty id", `{"type":"cancel_task","id":""}`, []string{`"id" is empty`}},
		{"send_message without text", `{"type":"send_message","to":"f1.1"}`, []string{"send_message command", `missing "text"`}},
		{"send_message blank to", `{"type":"send_message","to":" ","text":"hi"}`, []string{`"to" is empty`}},
		{"approve without id", `{"type":"approve","decision":"once"}`, []string{"approve command", `missing "id"`}},
		{"approve without decision", `{"type":"approve","id":"s1/c1"}`, []string{`missing "decision"`}},
		{"approve bad decision", `{"type":"approve","id":"s1/c1","decision":"yes"}`, []string{`decision "yes"`, "once, session, always or deny"}},
		{"approve decision case", `{"type":"approve","id":"s1/c1","decision":"Once"}`, []string{`decision "Once"`}},
		{"approve once with rule", `{"type":"approve","id":"s1/c1","decision":"once","rule":"Bash"}`, []string{"rule goes only with decision session or always"}},
		{"approve rule not a string", `{"type":"approve","id":"s1/c1","decision":"session","rule":["Bash"]}`, []string{`"rule" must be a string`}},
		{"elicitation without action", `{"type":"elicitation","id":"t-1"}`, []string{`missing "action"`}},
		{"elicitation bad action", `{"type":"elicitation","id":"t-1","action":"ok"}`, []string{`action "ok"`, "accept, decline or cancel"}},
		{"elicitation id without server", `{"type":"elicitation","id":"17","action":"cancel"}`, []string{`id "17"`, "<server>-<n>"}},
		{"elicitation id without number", `{"type":"elicitation","id":"srv-","action":"cancel"}`, []string{`id "srv-"`}},
		{"elicitation id not numbered", `{"type":"elicitation","id":"srv-x1","action":"cancel"}`, []string{`id "srv-x1"`}},
		{"elicitation id starting with a dash", `{"type":"elicitation","id":"-1","action":"cancel"}`, []string{`id "-1"`}},
		{"elicitation content not an object", `{"type":"elicitation","id":"t-1","action":"accept","content":"Ada"}`, []string{`"content" must be a JSON object`}},
		{"elicitation content null", `{"type":"elicitation","id":"t-1","action":"accept","content":null}`, []string{`"content" must be a JSON object`}},
		{"elicitation content with decline", `{"type":"elicitation","id":"t-1","action":"decline","content":{"a":1}}`, []string{"content goes only with action accept"}},
		{"elicitation server field", `{"type":"elicitation","id":"t-1","action":"cancel","server":"t"}`, []string{`unknown field "server"`}},
		{"posture missing", `{"type":"set_posture"}`, []string{`missing "posture"`}},
		{"posture bad", `{"type":"set_posture","posture":"reckless"}`, []string{`posture "reckless"`, "ask, auto or yolo"}},
		{"posture not normalised", `{"type":"set_posture","posture":" YOLO"}`, []string{`posture " YOLO"`}},
		{"posture empty", `{"type":"set_posture","posture":""}`, []string{`posture ""`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := DecodeCommand([]byte(tc.line))
			if err == nil {
				t.Fatalf("DecodeCommand(%s) = %#v, want an error", tc.line, cmd)
			}
			if cmd != nil {
				t.Errorf("DecodeCommand(%s) returned %#v with its error", tc.line, cmd)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestEncodeCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cmd  Command
		want string
	}{
		{"prompt", &PromptCmd{Text: "hi", Queue: true}, `{"type":"prompt","text":"hi","queue":true}`},
		{"cancel", &CancelCmd{}, `{"type":"cancel"}`},
		{"approve without rule", &ApproveCmd{ID: "a", Decision: ApproveDeny}, `{"type":"approve","id":"a","decision":"deny"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeCommand(tc.cmd)
			if err != nil || string(b) != tc.want {
				t.Fatalf("EncodeCommand = %s, %v; want %s", b, err, tc.want)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		if _, err := EncodeCommand((*PromptCmd)(nil)); err == nil {
			t.Fatal("a typed nil command was encoded")
		}
	})
}

// FuzzDecodeCommand: no input makes DecodeCommand panic, and every command
// it accepts encodes to a line that decodes to the same command.
func FuzzDecodeCommand(f *testing.F) {
	for _, s := range []string{
		`{"type":"prompt","text":"hi","queue":false}`,
		`{"type":"cancel"}`,
		`{"type":"cancel_task","id":"f1.2"}`,
		`{"type":"approve","id":"s1/c1","decision":"session","rule":"Bash(make:*)"}`,
		`{"type":"elicitation","id":"a-b-1","action":"accept","content":{"x":[1,{"y":null}],"z":1e-7}}`,
		`{"type":"set_posture","posture":"auto"}`,
		`{"type":"prompt","text":"\ud800 \u00e9","text":"x"}`,
		`{"type":"prompt","text":"a"} x`,
		`{"type":"elicitation","id":"-","action":"cancel"}`,
		`[`, `{`, `{"type"`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	if files, err := filepath.Glob(filepath.Join("testdata", "golden", "commands", "*.json")); err == nil {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		cmd, err := DecodeCommand(line)
		if err != nil {
			if cmd != nil {
				t.Fatalf("a command with the error %v", err)
			}
			return
		}
		b, err := EncodeCommand(cmd)
		if err != nil {
			t.Fatalf("encode %#v: %v", cmd, err)
		}
		again, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("re-decode %s (from %q): %v", b, line, err)
		}
		if !reflect.DeepEqual(cmd, again) {
			t.Fatalf("round trip of %q: %#v became %#v", line, cmd, again)
		}
	})
}
