package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/history"
	"reasonix/core/provider/providertest"
)

func TestHistoryFlags(t *testing.T) {
	t.Parallel()
	search := func(o HistorySearchOptions) *HistorySearchOptions { return &o }
	tests := []struct {
		name        string
		args        []string
		wantSearch  *HistorySearchOptions
		wantReindex *HistoryReindexOptions
		wantCode    int
	}{
		{"search defaults", []string{"search", "busy", "timeout"},
			search(HistorySearchOptions{Query: "busy timeout", Scope: "project", Limit: history.DefaultLimit}), nil, cmdutil.ExitOK},
		{"search flags", []string{"search", "--scope", "global", "--json", "--limit", "20", `"exact phrase"`},
			search(HistorySearchOptions{Query: `"exact phrase"`, Scope: "global", Limit: 20, JSON: true}), nil, cmdutil.ExitOK},
		{"search cwd", []string{"search", "--cwd", "/w", "x"},
			search(HistorySearchOptions{GlobalOptions: cmdutil.GlobalOptions{Cwd: "/w"}, Query: "x", Scope: "project", Limit: history.DefaultLimit}), nil, cmdutil.ExitOK},
		{"search without query", []string{"search"}, nil, nil, cmdutil.ExitUsage},
		{"search bad scope", []string{"search", "--scope", "everywhere", "x"}, nil, nil, cmdutil.ExitUsage},
		{"search limit too high", []string{"search", "--limit", "51", "x"}, nil, nil, cmdutil.ExitUsage},
		{"search unknown flag", []string{"search", "--yaml", "x"}, nil, nil, cmdutil.ExitUsage},
		{"reindex", []string{"reindex"}, nil, &HistoryReindexOptions{}, cmdutil.ExitOK},
		{"reindex config", []string{"reindex", "--config", "a.toml"}, nil,
			&HistoryReindexOptions{GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "a.toml"}}, cmdutil.ExitOK},
		{"reindex argument", []string{"reindex", "extra"}, nil, nil, cmdutil.ExitUsage},
		{"unknown subcommand", []string{"serach", "x"}, nil, nil, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var (
				gotSearch  *HistorySearchOptions
				gotReindex *HistoryReindexOptions
			)
			root := NewCmdRoot(f)
			old, _, err := root.Find([]string{"history"})
			if err != nil || old.Name() != "history" {
				t.Fatalf("root has no history command: %v", err)
			}
			root.RemoveCommand(old)
			root.AddCommand(NewCmdHistory(f,
				func(o *HistoryReindexOptions) error { gotReindex = o; return nil },
				func(o *HistorySearchOptions) error { gotSearch = o; return nil }))
			root.SetArgs(append([]string{"history"}, tt.args...))
			err = root.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				return
			}
			if tt.wantSearch != nil && (gotSearch == nil || *gotSearch != *tt.wantSearch) {
				t.Errorf("search options = %+v, want %+v", gotSearch, tt.wantSearch)
			}
			if tt.wantReindex != nil && (gotReindex == nil || *gotReindex != *tt.wantReindex) {
				t.Errorf("reindex options = %+v, want %+v", gotReindex, tt.wantReindex)
			}
		})
	}
}

// TestE2EHistoryCLI searches saved sessions and rebuilds the index with
// the real binary.
func TestE2EHistoryCLI(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if r := e.run("history", "search", "anything"); r.code != 0 || !strings.Contains(r.stdout, "No matches") ||
		!strings.Contains(r.stdout, "--scope global") {
		t.Fatalf("search of an empty home:\n%s", r)
	}
	e.srv.Push(providertest.Turn{Text: "The capybara config lives in capy.toml."})
	if r := e.run("run", "where is the capybara config?"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	ref, _ := oldHistory(t, e, "the capybara migrator")

	r := e.run("history", "search", "capybara")
	if r.code != 0 || strings.Count(r.stdout, "#") != 2 || strings.Contains(r.stdout, ref) {
		t.Fatalf("project search should show this workspace's two messages only:\n%s", r)
	}
	r = e.run("history", "search", "--scope", "global", "--json", "capybara", "migrator")
	if r.code != 0 {
		t.Fatalf("global search:\n%s", r)
	}
	var hits []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h["ref"].(string))
		for _, k := range []string{"session", "source", "role", "time", "score", "snippet", "path"} {
			if _, ok := h[k]; !ok {
				t.Errorf("hit %v lacks %q", h["ref"], k)
			}
		}
	}
	if !slices.Contains(got, ref) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "archive/") }) {
		t.Errorf("global refs = %v, want %s and the archive", got, ref)
	}

	r = e.run("history", "reindex")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 3 files, 6 messages") {
		t.Fatalf("reindex:\n%s", r)
	}
	if r := e.run("history", "search", "--scope", "global", "capybara"); r.code != 0 || !strings.Contains(r.stdout, ref) {
		t.Errorf("search after reindex:\n%s", r)
	}
	if r := e.run("history", "search", "***"); r.code != 2 || !strings.Contains(r.stderr, "no words to search for") {
		t.Errorf("a query without words:\n%s", r)
	}
}
