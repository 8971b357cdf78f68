package permission

import (
	"strings"
	"testing"
	"time"
)

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"/r/docs/**", "/r/docs/a.md", true},
		{"/r/docs/**", "/r/docs/x/y/z", true},
		{"/r/docs/**", "/r/docs", true},
		{"/r/docs/**", "/r/doc", false},
		{"/r/docs/**", "/r/docsx/a", false},
		{"/r/**/.env", "/r/.env", true},
		{"/r/**/.env", "/r/a/b/.env", true},
		{"/r/**/.env", "/r/a/b/.env.local", false},
		{"/r/*.go", "/r/a.go", true},
		{"/r/*.go", "/r/a/b.go", false},
		{"/r/**/*.go", "/r/a/b.go", true},
		{"/r/a/**/b/**/c", "/r/a/b/c", true},
		{"/r/a/**/b/**/c", "/r/a/x/b/y/z/c", true},
		{"/r/a/**/b/**/c", "/r/a/x/y/c", false},
		{"/r/[ab].txt", "/r/b.txt", true},
		{"/r/[ab].txt", "/r/c.txt", false},
		{`/r/a\*`, "/r/a*", true},
		{`/r/a\*`, "/r/ab", false},
		{"/r/?", "/r/x", true},
		{"/r/?", "/r/xy", false},
		{"/**", "/anything/at/all", true},
		{"/r/[", "/r/[", false},
		{"docs/**", "docs/a", true},
	}
	for _, tc := range cases {
		t.Run(tc.pattern+" "+tc.name, func(t *testing.T) {
			t.Parallel()
			if got := matchGlob(tc.pattern, tc.name); got != tc.want {
				t.Errorf("matchGlob(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
			}
		})
	}
}

func TestMatchGlobManyStars(t *testing.T) {
	t.Parallel()
	// A naive backtracking matcher takes exponential time here.
	pattern := "/" + strings.Repeat("**/", 40) + "x"
	name := "/" + strings.Repeat("a/", 40) + "y"
	start := time.Now()
	if matchGlob(pattern, name) {
		t.Error("pattern matched a name without the final segment")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("matchGlob took %v", d)
	}
}
