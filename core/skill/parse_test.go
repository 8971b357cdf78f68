package skill

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		dir     string
		want    Skill
		wantErr string
	}{
		{
			name: "no frontmatter",
			in:   "Just do it.\n",
			dir:  "plain",
			want: Skill{Name: "plain", Invocation: InvocationAuto, Body: "Just do it."},
		},
		{
			name: "every recognised key",
			in: "---\nname: security\ndescription: Audit for holes\nrunAs: subagent\nmodel: fake/pro\n" +
				"effort: high\ninvocation: manual\ntools: read_file, grep\n---\n\n# Prompt\nBe thorough.\n",
			dir: "sec",
			want: Skill{
				Name: "security", Description: "Audit for holes", RunAs: "subagent", Model: "fake/pro",
				Effort: "high", Invocation: InvocationManual, Tools: []string{"read_file", "grep"},
				Body: "# Prompt\nBe thorough.",
			},
		},
		{
			name: "name defaults to the directory",
			in:   "---\ndescription: d\n---\nbody",
			dir:  "from-dir",
			want: Skill{Name: "from-dir", Description: "d", Invocation: InvocationAuto, Body: "body"},
		},
		{
			name: "empty name keeps the directory name",
			in:   "---\nname:\n---\nbody",
			dir:  "kept",
			want: Skill{Name: "kept", Invocation: InvocationAuto, Body: "body"},
		},
		{
			name: "quotes comments and blank lines",
			in: "---\n# a comment\n\ndescription: \"Say \\\"hi\\\": now\" # trailing\nmodel: 'it''s' # c\n" +
				"effort: plain value # comment\nrunAs: \"subagent\"\n---\nb",
			dir: "q",
			want: Skill{Name: "q", Description: `Say "hi": now`, Model: "it's", Effort: "plain value",
				RunAs: "subagent", Invocation: InvocationAuto, Body: "b"},
		},
		{
			name: "hash without space is part of the value",
			in:   "---\ndescription: Write C# code\n---\n",
			dir:  "cs",
			want: Skill{Name: "cs", Description: "Write C# code", Invocation: InvocationAuto},
		},
		{
			name: "colon inside a plain value",
			in:   "---\ndescription: Step one: read\n---\n",
			dir:  "c",
			want: Skill{Name: "c", Description: "Step one: read", Invocation: InvocationAuto},
		},
		{
			name: "unknown keys are kept",
			in:   "---\nlicense: MIT\nx-owner: team\n---\n",
			dir:  "u",
			want: Skill{Name: "u", Invocation: InvocationAuto, Extra: map[string]string{"license": "MIT", "x-owner": "team"}},
		},
		{
			name: "key spellings fold together",
			in:   "---\nrun_as: subagent\nInvocation: AUTO\nallowed-tools: [\"ls\", glob]\n---\n",
			dir:  "k",
			want: Skill{Name: "k", RunAs: "subagent", Invocation: InvocationAuto, Tools: []string{"ls", "glob"}},
		},
		{
			name: "CRLF and BOM",
			in:   "\ufeff---\r\nname: win\r\nrunAs: subagent\r\n---\r\nLine one\r\nLine two\r\n",
			dir:  "d",
			want: Skill{Name: "win", RunAs: "subagent", Invocation: InvocationAuto, Body: "Line one\nLine two"},
		},
		{
			name: "closing fence with trailing spaces and empty body",
			in:   "--- \nname: e\n---  ",
			dir:  "d",
			want: Skill{Name: "e", Invocation: InvocationAuto},
		},
		{
			name: "a later rule is body text",
			in:   "---\nname: r\n---\nabove\n---\nbelow",
			dir:  "d",
			want: Skill{Name: "r", Invocation: InvocationAuto, Body: "above\n---\nbelow"},
		},
		{
			name: "fence not on the first line is body",
			in:   "\n---\nname: x\n---\n",
			dir:  "d",
			want: Skill{Name: "d", Invocation: InvocationAuto, Body: "---\nname: x\n---"},
		},
		{name: "unclosed frontmatter", in: "---\nname: x\nbody", dir: "d", wantErr: "no closing ---"},
		{name: "line without colon", in: "---\nname x\n---\n", dir: "d", wantErr: "want key: value"},
		{name: "empty key", in: "---\n: x\n---\n", dir: "d", wantErr: "want key: value"},
		{name: "indented continuation", in: "---\ndescription: a\n  b\n---\n", dir: "d", wantErr: "line 3: indented"},
		{name: "yaml list", in: "---\ntools:\n- ls\n---\n", dir: "d", wantErr: "lists are not supported"},
		{name: "block scalar", in: "---\ndescription: >-\n---\n", dir: "d", wantErr: "block values"},
		{name: "duplicate key", in: "---\nrunAs: a\nrun_as: b\n---\n", dir: "d", wantErr: "already set on line 2"},
		{name: "unterminated double quote", in: "---\nname: \"x\n---\n", dir: "d", wantErr: "unterminated double-quoted"},
		{name: "unterminated single quote", in: "---\nname: 'x\n---\n", dir: "d", wantErr: "unterminated single-quoted"},
		{name: "text after quote", in: "---\nname: \"x\" y\n---\n", dir: "d", wantErr: "after the closing quote"},
		{name: "bad escape", in: "---\nname: \"\\q\"\n---\n", dir: "d", wantErr: "bad double-quoted"},
		{name: "bad invocation", in: "---\ninvocation: sometimes\n---\n", dir: "d", wantErr: "want auto or manual"},
		{name: "bad name", in: "---\nname: two words\n---\n", dir: "d", wantErr: "name \"two words\""},
		{name: "name with slash", in: "---\nname: a/b\n---\n", dir: "d", wantErr: "letters, digits"},
		{name: "overlong name", in: "---\nname: " + strings.Repeat("a", 65) + "\n---\n", dir: "d", wantErr: "longer than 64"},
		{name: "bad directory name", in: "body", dir: "-dash", wantErr: "starting with a letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tt.in), tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q (skill %+v)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestIsProfile(t *testing.T) {
	t.Parallel()
	for runAs, want := range map[string]bool{"subagent": true, " Subagent ": true, "": false, "inline": false, "subagents": false} {
		if got := (Skill{RunAs: runAs}).IsProfile(); got != want {
			t.Errorf("IsProfile(runAs %q) = %v, want %v", runAs, got, want)
		}
	}
}

func TestProfileSystemPromptAndTools(t *testing.T) {
	t.Parallel()
	empty := Profile{Skill: Skill{Name: "x"}}
	if got := empty.SystemPrompt(); got != genericPrompt || got == "" {
		t.Errorf("empty body: SystemPrompt = %q, want the generic prompt", got)
	}
	custom := Profile{Skill: Skill{Name: "x", Body: "Only this.", Tools: []string{"read_file"}}}
	if got := custom.SystemPrompt(); got != "Only this." {
		t.Errorf("SystemPrompt = %q, want the body alone", got)
	}
	if !custom.Allows("read_file") || custom.Allows("bash") {
		t.Error("a tools list must allow exactly the listed tools")
	}
	if !empty.Allows("bash") {
		t.Error("a profile without a tools list must allow every tool")
	}
}
