package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line%02d\n", i)
		}
		return b.String()
	}
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(0x80 + i%0x40) // continuation bytes: invalid UTF-8, no NUL
	}
	tests := []struct {
		name    string
		content string // written to f.txt unless noFile or dir
		noFile  bool
		dir     bool
		args    string
		limits  tool.Limits
		want    string
		wantErr string
	}{
		{name: "numbered lines", content: "a\n\tb\n", args: `{"path":"f.txt"}`,
			want: "     1\ta\n     2\t\tb"},
		{name: "no trailing newline", content: "a\nb", args: `{"path":"f.txt"}`,
			want: "     1\ta\n     2\tb"},
		{name: "crlf shown without carriage returns", content: "a\r\nb\r\n", args: `{"path":"f.txt"}`,
			want: "     1\ta\n     2\tb"},
		{name: "offset and limit", content: "a\nb\nc\n", args: `{"path":"f.txt","offset":2,"limit":1}`,
			want: "     2\tb\n[showed lines 2-2 of 3; call read_file with offset=3 to read more]"},
		{name: "offset to the end", content: "a\nb\nc\n", args: `{"path":"f.txt","offset":3}`,
			want: "     3\tc"},
		{name: "offset zero means start", content: "a\n", args: `{"path":"f.txt","offset":0}`,
			want: "     1\ta"},
		{name: "limit covering the rest has no marker", content: "a\nb\n", args: `{"path":"f.txt","limit":5}`,
			want: "     1\ta\n     2\tb"},
		{name: "offset past end", content: "a\nb\nc\n", args: `{"path":"f.txt","offset":4}`,
			wantErr: "offset 4 is past the end of the file, which has 3 lines"},
		{name: "negative offset", content: "a\n", args: `{"path":"f.txt","offset":-1}`,
			wantErr: "offset must be 1 or more"},
		{name: "negative limit", content: "a\n", args: `{"path":"f.txt","limit":-2}`,
			wantErr: "limit must be 1 or more"},
		{name: "empty file", content: "", args: `{"path":"f.txt"}`,
			want: "f.txt is an empty file (0 bytes)"},
		{name: "nul byte is binary", content: "PK\x03\x04\x00\x00rest", args: `{"path":"f.txt"}`,
			want: "f.txt: binary file, 10 bytes; not shown"},
		{name: "invalid utf8 is binary", content: string(binary), args: `{"path":"f.txt"}`,
			want: "f.txt: binary file, 3000 bytes; not shown"},
		{name: "stray latin1 byte is text", content: "caf\xe9 au lait\n", args: `{"path":"f.txt"}`,
			want: "     1\tcaf\uFFFD au lait"},
		{name: "size cap at line boundary", content: numbered(5), args: `{"path":"f.txt"}`, limits: tool.Limits{ReadBytes: 40},
			want: "     1\tline01\n     2\tline02\n[output reached the 40-byte read limit: showed lines 1-2 of 5; call read_file with offset=3 to read more]"},
		{name: "size cap after offset", content: numbered(5), args: `{"path":"f.txt","offset":4}`, limits: tool.Limits{ReadBytes: 20},
			want: "     4\tline04\n[output reached the 20-byte read limit: showed lines 4-4 of 5; call read_file with offset=5 to read more]"},
		{name: "over-long first line is cut", content: strings.Repeat("x", 100) + "\nshort\n", args: `{"path":"f.txt"}`, limits: tool.Limits{ReadBytes: 20},
			want: "     1\txxxxxxxxxxxx\n[line 1 is 100 bytes long and was cut at the 20-byte read limit; the file has 2 lines; call read_file with offset=2 to continue after it]"},
		{name: "over-long last line is cut", content: strings.Repeat("é", 50), args: `{"path":"f.txt"}`, limits: tool.Limits{ReadBytes: 20},
			want: "     1\téééééé\n[line 1 is 100 bytes long and was cut at the 20-byte read limit]"},
		{name: "missing file", noFile: true, args: `{"path":"nope.txt"}`,
			wantErr: "read_file: nope.txt does not exist"},
		{name: "directory", dir: true, args: `{"path":"f.txt"}`,
			wantErr: "read_file: f.txt is a directory; use ls to list it"},
		{name: "path required", noFile: true, args: `{"offset":1}`,
			wantErr: `read_file: "path" is required`},
		{name: "offset wrong type", content: "a\n", args: `{"path":"f.txt","offset":"2"}`,
			wantErr: `read_file: "offset" must be an integer, got string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			switch {
			case tc.dir:
				if err := os.Mkdir(filepath.Join(root, "f.txt"), 0o755); err != nil {
					t.Fatal(err)
				}
			case !tc.noFile:
				putFile(t, root, "f.txt", tc.content)
			}
			got, err := runTool(t, tool.Env{Root: root, Limits: tc.limits}, "read_file", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestReadFileLongLines(t *testing.T) {
	t.Parallel()
	// Lines longer than the reader's internal buffer must come back whole
	// when the byte budget allows it.
	long := strings.Repeat("0123456789", 10<<10) // 100 KiB
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{name: "long line then short", content: long + "\nend\n", want: "     1\t" + long + "\n     2\tend"},
		{name: "long line without newline", content: "start\n" + long, want: "     1\tstart\n     2\t" + long},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			putFile(t, root, "big.txt", tc.content)
			got, err := runTool(t, tool.Env{Root: root}, "read_file", `{"path":"big.txt"}`)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %d bytes, want %d bytes", len(got), len(tc.want))
			}
		})
	}
}

func TestReadFileGuardAndContext(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	putFile(t, root, "f.txt", "hello\n")
	tests := []struct {
		name    string
		env     tool.Env
		ctx     func() context.Context
		want    string
		wantErr string
	}{
		{name: "read allowed while writes are refused", env: tool.Env{Root: root, Guard: stubGuard{root: root, writeDeny: true}},
			want: "     1\thello"},
		{name: "read refused", env: tool.Env{Root: root, Guard: stubGuard{root: root, readDeny: true}},
			wantErr: "read_file: guard: read refused for f.txt"},
		{name: "cancelled", env: tool.Env{Root: root}, ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, wantErr: "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			tools, err := tool.NewBuiltins(tc.env, []string{"read_file"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := tools[0].Execute(ctx, json.RawMessage(`{"path":"f.txt"}`))
			checkResult(t, got, err, tc.want, tc.wantErr)
		})
	}
}
