package permission

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	p := Policy{Mode: Ask, Root: testRoot, Home: testHome}
	cases := []struct {
		name string
		tool string
		args json.RawMessage
		want []string
	}{
		{"go test", "bash", cmd("go test ./..."), []string{"Bash(go test ./...)", "Bash(go test:*)"}},
		{"git status", "bash", cmd("git status"), []string{"Bash(git status)", "Bash(git status:*)"}},
		{"flag second", "bash", cmd("ls -la"), []string{"Bash(ls -la)", "Bash(ls:*)"}},
		{"path second", "bash", cmd("cat ./README.md"), []string{"Bash(cat ./README.md)", "Bash(cat:*)"}},
		{"one word", "bash", cmd("make"), []string{"Bash(make)", "Bash(make:*)"}},
		{"script path", "bash", cmd("./scripts/test.sh --fast"), []string{"Bash(./scripts/test.sh --fast)", "Bash(./scripts/test.sh:*)"}},
		{"npm run", "bash", cmd("npm run build"), []string{"Bash(npm run build)", "Bash(npm run:*)"}},
		{"trimmed", "bash", cmd("  go vet  "), []string{"Bash(go vet)", "Bash(go vet:*)"}},
		{"compound gets no prefix", "bash", cmd("go test ./... && rm -rf tmp"), []string{"Bash(go test ./... && rm -rf tmp)"}},
		{"pipeline gets no prefix", "bash", cmd("go test | tee log"), []string{"Bash(go test | tee log)"}},
		{"redirect gets no prefix", "bash", cmd("go test > log"), []string{"Bash(go test > log)"}},
		{"assignment gets no prefix", "bash", cmd("CGO_ENABLED=0 go build"), []string{"Bash(CGO_ENABLED=0 go build)"}},
		{"wrapper gets no prefix", "bash", cmd("bash -c 'make'"), []string{"Bash(bash -c 'make')"}},
		{"odd first word gets no prefix", "bash", cmd("'my tool' run"), []string{"Bash('my tool' run)"}},
		{"trailing star has no exact form", "bash", cmd("ls *"), []string{"Bash(ls:*)"}},
		{"unparsable gets nothing", "bash", cmd("echo 'x"), nil},
		{"empty command", "bash", cmd(""), nil},
		{"relative file", "write_file", argsJSON("path", "docs/a.md"), []string{"Edit(docs/a.md)", "Edit"}},
		{"absolute inside root", "edit_file", argsJSON("path", testRoot+"/src/x.go"), []string{"Edit(src/x.go)", "Edit"}},
		{"file_path", "multi_edit", argsJSON("file_path", "./src/../x.go"), []string{"Edit(x.go)", "Edit"}},
		{"outside root", "write_file", argsJSON("path", "/etc/hosts"), []string{"Edit(/etc/hosts)", "Edit"}},
		{"glob characters escaped", "write_file", argsJSON("path", "a[1]*(2).txt"), []string{`Edit(a\[1\]\*\(2\).txt)`, "Edit"}},
		{"tilde directory", "write_file", argsJSON("path", "~x/a"), []string{"Edit(./~x/a)", "Edit"}},
		{"move within dir", "move_file", argsJSON("path", "docs/a.md", "destination", "docs/sub/b.md"), []string{"Edit(docs/**)", "Edit"}},
		{"move across root", "move_file", argsJSON("path", "a.md", "destination", "b.md"), []string{"Edit"}},
		{"edit without path", "write_file", argsJSON("content", "x"), []string{"Edit"}},
		{"mcp tool", "mcp__gh__create_issue", argsJSON("title", "x"), []string{"mcp__gh__create_issue"}},
		{"reader", "read_file", argsJSON("path", "a"), []string{"read_file"}},
		{"bad tool name", "no such tool", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := p.Suggest(tc.tool, tc.args)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Suggest(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
			}
			// Every suggestion, once allowed, lets the same call through.
			for _, s := range got {
				q, err := NewPolicy("ask", []string{s}, nil, nil, testRoot, testHome)
				if err != nil {
					t.Fatalf("suggestion %q does not parse: %v", s, err)
				}
				if d := q.Decide(tc.tool, false, tc.args); d != Allow {
					t.Errorf("allow %q decides %v for the call it came from", s, d)
				}
			}
		})
	}
}

func TestSuggestedPathIsExact(t *testing.T) {
	t.Parallel()
	p := Policy{Mode: Ask, Root: testRoot}
	got := p.Suggest("write_file", argsJSON("path", "a*.txt"))
	if len(got) == 0 {
		t.Fatal("no suggestion")
	}
	q, err := NewPolicy("ask", got[:1], nil, nil, testRoot, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := q.Decide("write_file", false, argsJSON("path", "abc.txt")); d != Ask {
		t.Errorf("%s also allows abc.txt", got[0])
	}
}

func TestGrants(t *testing.T) {
	t.Parallel()
	t.Run("covers like an allow rule", func(t *testing.T) {
		t.Parallel()
		g := NewGrants(testRoot, testHome)
		if g.Covers("bash", cmd("go test")) {
			t.Error("empty grants cover a call")
		}
		for _, r := range []string{"Bash(go test:*)", "Edit(docs/**)", "mcp__gh__create_issue"} {
			if err := g.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			tool string
			args json.RawMessage
			want bool
		}{
			{"bash", cmd("go test ./..."), true},
			{"bash", cmd("go test ./... && rm -rf tmp"), false},
			{"bash", cmd("go build"), false},
			{"write_file", argsJSON("path", "docs/a"), true},
			{"write_file", argsJSON("path", "src/a"), false},
			{"move_file", argsJSON("path", "docs/a", "destination", "src/a"), false},
			{"mcp__gh__create_issue", nil, true},
			{"mcp__gh__delete_repo", nil, false},
		}
		for _, tc := range cases {
			if got := g.Covers(tc.tool, tc.args); got != tc.want {
				t.Errorf("Covers(%s, %s) = %v, want %v", tc.tool, tc.args, got, tc.want)
			}
		}
	})
	t.Run("deduplicates", func(t *testing.T) {
		t.Parallel()
		g := NewGrants("", "")
		for _, r := range []string{"Bash(go test:*)", "Bash(go test *)", "bash(go test:*)"} {
			if err := g.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(g.Rules()); n != 1 {
			t.Errorf("%d rules after adding one rule three ways", n)
		}
	})
	t.Run("rejects bad rules", func(t *testing.T) {
		t.Parallel()
		g := NewGrants("", "")
		if err := g.Add("Bash("); err == nil {
			t.Error("Add accepted a malformed rule")
		}
		if len(g.Rules()) != 0 {
			t.Error("a malformed rule was recorded")
		}
	})
	t.Run("nil covers nothing", func(t *testing.T) {
		t.Parallel()
		var g *Grants
		if g.Covers("bash", cmd("ls")) || g.Rules() != nil {
			t.Error("nil Grants is not empty")
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		t.Parallel()
		g := NewGrants(testRoot, "")
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_ = g.Add([]string{"Bash(go test:*)", "Bash(make:*)", "Edit(docs/**)", "Bash(ls:*)"}[i%4])
			}()
			go func() {
				defer wg.Done()
				_ = g.Covers("bash", cmd("go test"))
			}()
		}
		wg.Wait()
		if !g.Covers("bash", cmd("go test ./...")) || len(g.Rules()) != 4 {
			t.Errorf("after concurrent adds: rules %v", g.Rules())
		}
	})
}
