package ref

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"reasonix/core/testenv"
)

func TestComplete(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{
		"main.go":         "",
		"Makefile":        "",
		"map.txt":         "",
		".env":            "",
		".github/ci.yml":  "",
		"src/main.go":     "",
		"src/map/x.go":    "",
		"src/mat.go":      "",
		"src/other.go":    "",
		"src/.hidden":     "",
		"src/deep/a/b.go": "",
		"docs/":           "",
	})
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "srclink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		partial string
		limit   int
		want    []Entry
	}{
		{
			name: "root: dirs first, no hidden",
			want: []Entry{{"docs/", true}, {"src/", true}, {"srclink/", true}, {"Makefile", false}, {"main.go", false}, {"map.txt", false}},
		},
		{
			name:    "prefix in a subdirectory",
			partial: "src/ma",
			want:    []Entry{{"src/map/", true}, {"src/main.go", false}, {"src/mat.go", false}},
		},
		{
			name:    "directory itself",
			partial: "src/",
			want:    []Entry{{"src/deep/", true}, {"src/map/", true}, {"src/main.go", false}, {"src/mat.go", false}, {"src/other.go", false}},
		},
		{
			name:    "hidden when asked for",
			partial: ".",
			want:    []Entry{{".github/", true}, {".env", false}},
		},
		{
			name:    "hidden in a subdirectory",
			partial: "src/.h",
			want:    []Entry{{"src/.hidden", false}},
		},
		{
			name:    "one level only",
			partial: "src/deep/",
			want:    []Entry{{"src/deep/a/", true}},
		},
		{
			name:    "limit",
			partial: "",
			limit:   2,
			want:    []Entry{{"docs/", true}, {"src/", true}},
		},
		{name: "no match", partial: "zzz"},
		{name: "missing directory", partial: "nope/x"},
		{name: "file as directory", partial: "main.go/"},
		{name: "below a file", partial: "main.go/a/b"},
		{name: "case sensitive", partial: "MAIN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Complete(root, tc.partial, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Complete(%q) = %v, want %v", tc.partial, got, tc.want)
			}
		})
	}
}

func TestCompleteAbsolute(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{"a/b.txt": ""})
	got, err := Complete(t.TempDir(), root+"/a/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{{root + "/a/b.txt", false}}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestCompleteOutsideRoot(t *testing.T) {
	t.Parallel()
	if _, err := Complete(t.TempDir(), "../", 0); err == nil {
		t.Fatal("want an error for a partial above the root")
	}
}
