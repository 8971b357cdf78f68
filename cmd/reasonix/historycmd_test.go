package main

import (
	"io"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/history"
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
