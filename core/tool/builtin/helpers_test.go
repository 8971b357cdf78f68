package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

// stubGuard is a PathGuard that anchors paths at root and refuses reads or
// writes on demand, so tests can tell which policy a tool consulted.
type stubGuard struct {
	root      string
	readDeny  bool
	writeDeny bool
	hide      string // base name whose reads are refused
}

func (g stubGuard) ReadPath(p string) (string, error) {
	if g.readDeny || g.hide != "" && filepath.Base(p) == g.hide {
		return "", errors.New("guard: read refused for " + p)
	}
	return toolpath.JoinRoot(g.root, p), nil
}

func (g stubGuard) WritePath(p string) (string, error) {
	if g.writeDeny {
		return "", errors.New("guard: write refused for " + p)
	}
	return toolpath.JoinRoot(g.root, p), nil
}

// putFile writes content to rel under root, creating parents.
func putFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileText returns the content of rel under root.
func fileText(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runTool builds the named built-in for env and executes it with args.
func runTool(t *testing.T, env tool.Env, name, args string) (string, error) {
	t.Helper()
	tools, err := tool.NewBuiltins(env, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return tools[0].Execute(context.Background(), json.RawMessage(args))
}

// callTool runs one tool call with args marshalled from a map.
func callTool(t *testing.T, tl tool.Tool, args map[string]any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Execute(context.Background(), raw)
}

// checkResult compares a tool outcome against either an exact result or an
// error substring.
func checkResult(t *testing.T, got string, err error, want, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil {
			t.Fatalf("want error containing %q, got result %q", wantErr, got)
		}
		if !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %q does not contain %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got != want {
		t.Fatalf("result mismatch\n got: %q\nwant: %q", got, want)
	}
}

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	type item struct {
		A string `json:"a" arg:"required"`
		B bool   `json:"b"`
	}
	type embedded struct {
		E string `json:"e" arg:"required"`
	}
	type args struct {
		Path  string `json:"path" arg:"required"`
		N     int    `json:"n"`
		Items []item `json:"items"`
		embedded
	}
	tests := []struct {
		name    string
		raw     string
		want    args
		wantErr string
	}{
		{name: "all fields", raw: `{"path":"p","n":3,"items":[{"a":"x","b":true}],"e":"y"}`,
			want: args{Path: "p", N: 3, Items: []item{{A: "x", B: true}}, embedded: embedded{E: "y"}}},
		{name: "unknown fields ignored", raw: `{"path":"p","e":"y","extra":[1,2]}`, want: args{Path: "p", embedded: embedded{E: "y"}}},
		{name: "double encoded", raw: `"{\"path\":\"p\",\"e\":\"y\"}"`, want: args{Path: "p", embedded: embedded{E: "y"}}},
		{name: "missing required", raw: `{"e":"y"}`, wantErr: `t: "path" is required`},
		{name: "null required", raw: `{"path":null,"e":"y"}`, wantErr: `t: "path" is required`},
		{name: "empty string is present", raw: `{"path":"","e":""}`, want: args{}},
		{name: "missing embedded required", raw: `{"path":"p"}`, wantErr: `t: "e" is required`},
		{name: "missing in array item", raw: `{"path":"p","e":"y","items":[{"a":"x"},{"b":true}]}`, wantErr: `t: "items" item 2: "a" is required`},
		{name: "wrong type", raw: `{"path":"p","e":"y","n":"3"}`, wantErr: `t: "n" must be an integer, got string`},
		{name: "fraction for integer", raw: `{"path":"p","e":"y","n":1.5}`, wantErr: `t: "n" must be an integer, got number 1.5`},
		{name: "wrong type nested", raw: `{"path":"p","e":"y","items":[{"a":1}]}`, wantErr: `t: "items.a" must be a string, got number`},
		{name: "object for array", raw: `{"path":"p","e":"y","items":{}}`, wantErr: `t: "items" must be an array, got object`},
		{name: "empty arguments", raw: ``, wantErr: `t: "path" is required`},
		{name: "not an object", raw: `[1]`, wantErr: "t: arguments must be a JSON object"},
		{name: "invalid json", raw: `{"path":`, wantErr: "t: arguments are not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got args
			err := tool.DecodeArgs("t", json.RawMessage(tc.raw), &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) || got.E != tc.want.E {
				t.Fatalf("decoded %s (e=%q), want %s (e=%q)", gj, got.E, wj, tc.want.E)
			}
		})
	}
}
