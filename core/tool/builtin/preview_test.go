package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
)

func previewOf(t *testing.T, env tool.Env, name, args string) (string, error) {
	t.Helper()
	tl, err := tool.NewBuiltins(env, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	pv, ok := tl[0].(tool.Previewer)
	if !ok {
		t.Fatalf("%s has no preview", name)
	}
	return pv.Preview(context.Background(), json.RawMessage(args))
}

// TestPreviews: write_file, edit_file and multi_edit show, as a unified
// diff, what they would write, without writing it; a path the tool could
// not write is no preview either.
func TestPreviews(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	putFile(t, root, "main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	env := tool.Env{Root: root}
	cases := []struct {
		name, tool, args string
		want             []string
		wantErr          string
	}{
		{"new file", "write_file", `{"path":"notes/todo.md","content":"one\ntwo\n"}`,
			[]string{"--- /dev/null", "+++ b/notes/todo.md", "+one", "+two"}, ""},
		{"overwrite", "write_file", `{"path":"main.go","content":"package main\n"}`,
			[]string{"--- a/main.go", "+++ b/main.go", "-func main() {", " package main"}, ""},
		{"edit", "edit_file", `{"path":"main.go","old_string":"println(\"hi\")","new_string":"println(\"bye\")"}`,
			[]string{"@@", "-\tprintln(\"hi\")", "+\tprintln(\"bye\")"}, ""},
		{"multi edit", "multi_edit", `{"path":"main.go","edits":[{"old_string":"hi","new_string":"a"},{"old_string":"a\")","new_string":"b\")"}]}`,
			[]string{"+\tprintln(\"b\")"}, ""},
		{"edit that does not match", "edit_file", `{"path":"main.go","old_string":"nowhere","new_string":"x"}`, nil, "edit_file: edit 1 of 1"},
		{"refused by the guard", "write_file", `{"path":"main.go","content":"x"}`, nil, "write refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if strings.HasPrefix(tc.name, "refused") {
				e.Guard = stubGuard{writeDeny: true}
			}
			got, err := previewOf(t, e, tc.tool, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("preview: %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("preview lacks %q:\n%s", w, got)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "notes")); err == nil {
		t.Error("a preview wrote the file")
	}
	if text := fileText(t, root, "main.go"); !strings.Contains(text, `println("hi")`) {
		t.Errorf("a preview changed main.go:\n%s", text)
	}
}
