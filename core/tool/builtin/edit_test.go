package builtin

import (
	"testing"

	"reasonix/core/tool"
)

func TestEditFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		initial  string // content of f.go; "" with noFile means absent
		noFile   bool
		args     string
		want     string
		wantErr  string
		wantText string // file content afterwards; defaults to initial on error
	}{
		{name: "single replacement", initial: "func a() {}\nfunc b() {}\n",
			args:     `{"path":"f.go","old_string":"func a()","new_string":"func alpha()"}`,
			want:     "edited f.go: 1 replacement",
			wantText: "func alpha() {}\nfunc b() {}\n"},
		{name: "delete with empty new_string", initial: "keep\ndrop\n",
			args:     `{"path":"f.go","old_string":"drop\n","new_string":""}`,
			want:     "edited f.go: 1 replacement",
			wantText: "keep\n"},
		{name: "replace_all", initial: "x := 1\nx++\nuse(x)\n",
			args:     `{"path":"f.go","old_string":"x","new_string":"count","replace_all":true}`,
			want:     "edited f.go: 3 replacements",
			wantText: "count := 1\ncount++\nuse(count)\n"},
		{name: "replace_all with one match", initial: "only one\n",
			args:     `{"path":"f.go","old_string":"one","new_string":"1","replace_all":true}`,
			want:     "edited f.go: 1 replacement",
			wantText: "only 1\n"},
		{name: "several matches without replace_all", initial: "x\nx\nx\n",
			args:    `{"path":"f.go","old_string":"x","new_string":"y"}`,
			wantErr: "edit_file: f.go: old_string occurs 3 times; include more surrounding lines to make it unique, or set replace_all to true"},
		{name: "not found", initial: "hello\n",
			args:    `{"path":"f.go","old_string":"goodbye","new_string":"bye"}`,
			wantErr: "edit_file: f.go: old_string was not found; read the file again and copy the text exactly"},
		{name: "whitespace-only mismatch", initial: "func f() {\n\treturn 1\n}\n",
			args:    `{"path":"f.go","old_string":"func f() {\n    return 1\n}","new_string":"x"}`,
			wantErr: "old_string was not found; the text is present but whitespace or indentation differs"},
		{name: "crlf mismatch", initial: "one\r\ntwo\r\n",
			args:    `{"path":"f.go","old_string":"one\ntwo","new_string":"x"}`,
			wantErr: "old_string was not found; the file uses CRLF"},
		{name: "identical strings", initial: "same\n",
			args:    `{"path":"f.go","old_string":"same","new_string":"same"}`,
			wantErr: "old_string and new_string are identical"},
		{name: "empty old_string", initial: "text\n",
			args:    `{"path":"f.go","old_string":"","new_string":"x"}`,
			wantErr: "old_string is empty; use write_file"},
		{name: "missing file", noFile: true,
			args:    `{"path":"f.go","old_string":"a","new_string":"b"}`,
			wantErr: "edit_file: f.go: file does not exist; use write_file to create it"},
		{name: "new_string required", initial: "a\n",
			args:    `{"path":"f.go","old_string":"a"}`,
			wantErr: `edit_file: "new_string" is required`},
		{name: "replace_all wrong type", initial: "a\n",
			args:    `{"path":"f.go","old_string":"a","new_string":"b","replace_all":"yes"}`,
			wantErr: `edit_file: "replace_all" must be a boolean, got string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if !tc.noFile {
				putFile(t, root, "f.go", tc.initial)
			}
			got, err := runTool(t, tool.Env{Root: root}, "edit_file", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
			if tc.noFile {
				return
			}
			want := tc.wantText
			if tc.wantErr != "" {
				want = tc.initial
			}
			if text := fileText(t, root, "f.go"); text != want {
				t.Fatalf("file = %q, want %q", text, want)
			}
		})
	}
}

func TestMultiEdit(t *testing.T) {
	t.Parallel()
	const initial = "package p\n\nfunc old() int { return 1 }\n\nvar a, b = old(), old()\n"
	tests := []struct {
		name     string
		args     string
		want     string
		wantErr  string
		wantText string // file content afterwards; must be initial on error
	}{
		{name: "edits apply in sequence",
			args: `{"path":"f.go","edits":[
				{"old_string":"func old()","new_string":"func fresh()"},
				{"old_string":"old(), old()","new_string":"fresh(), fresh()"},
				{"old_string":"fresh() int","new_string":"fresh() int64"}]}`,
			want:     "edited f.go: 3 edits, 3 replacements",
			wantText: "package p\n\nfunc fresh() int64 { return 1 }\n\nvar a, b = fresh(), fresh()\n"},
		{name: "replace_all inside an edit",
			args:     `{"path":"f.go","edits":[{"old_string":"old","new_string":"x","replace_all":true}]}`,
			want:     "edited f.go: 1 edit, 3 replacements",
			wantText: "package p\n\nfunc x() int { return 1 }\n\nvar a, b = x(), x()\n"},
		{name: "later failure writes nothing",
			args: `{"path":"f.go","edits":[
				{"old_string":"package p","new_string":"package q"},
				{"old_string":"not there","new_string":"x"}]}`,
			wantErr: "multi_edit: f.go: edit 2 of 2: old_string was not found; read the file again and copy the text exactly; nothing was written (edits apply in order"},
		{name: "ambiguous first edit",
			args: `{"path":"f.go","edits":[
				{"old_string":"old()","new_string":"x()"},
				{"old_string":"package p","new_string":"package q"}]}`,
			wantErr: "multi_edit: f.go: edit 1 of 2: old_string occurs 3 times"},
		{name: "edit made stale by an earlier one",
			args: `{"path":"f.go","edits":[
				{"old_string":"return 1","new_string":"return 2"},
				{"old_string":"return 1","new_string":"return 3"}]}`,
			wantErr: "edit 2 of 2: old_string was not found"},
		{name: "identical strings in an edit",
			args:    `{"path":"f.go","edits":[{"old_string":"p","new_string":"p"}]}`,
			wantErr: "edit 1 of 1: old_string and new_string are identical"},
		{name: "no edits",
			args:    `{"path":"f.go","edits":[]}`,
			wantErr: `multi_edit: "edits" must contain at least one edit`},
		{name: "edits required",
			args:    `{"path":"f.go"}`,
			wantErr: `multi_edit: "edits" is required`},
		{name: "item field required",
			args:    `{"path":"f.go","edits":[{"old_string":"a","new_string":"b"},{"new_string":"c"}]}`,
			wantErr: `multi_edit: "edits" item 2: "old_string" is required`},
		{name: "edits wrong type",
			args:    `{"path":"f.go","edits":{"old_string":"a","new_string":"b"}}`,
			wantErr: `multi_edit: "edits" must be an array, got object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			putFile(t, root, "f.go", initial)
			got, err := runTool(t, tool.Env{Root: root}, "multi_edit", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
			want := tc.wantText
			if tc.wantErr != "" {
				want = initial
			}
			if text := fileText(t, root, "f.go"); text != want {
				t.Fatalf("file = %q, want %q", text, want)
			}
			assertNoTempFiles(t, root)
		})
	}
}

func TestEditToolsRespectWriteGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string
		args string
	}{
		{name: "edit_file", tool: "edit_file", args: `{"path":"f.txt","old_string":"a","new_string":"b"}`},
		{name: "multi_edit", tool: "multi_edit", args: `{"path":"f.txt","edits":[{"old_string":"a","new_string":"b"}]}`},
		{name: "move_file", tool: "move_file", args: `{"path":"f.txt","destination":"g.txt"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			putFile(t, root, "f.txt", "a")
			env := tool.Env{Root: root, Guard: stubGuard{root: root, writeDeny: true}}
			_, err := runTool(t, env, tc.tool, tc.args)
			checkResult(t, "", err, "", "guard: write refused for f.txt")
			if text := fileText(t, root, "f.txt"); text != "a" {
				t.Fatalf("file changed to %q despite the guard", text)
			}
		})
	}
}
