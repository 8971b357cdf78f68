package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one too long", 11, "one too lo…"},
		{"héllo wörld", 6, "héllo…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"abc", 0, "…"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  first\n\tsecond   third  ", 100); got != "first second third" {
		t.Errorf("got %q", got)
	}
	if got := OneLine("a\nb\nc\nd", 4); got != "a b…" {
		t.Errorf("got %q", got)
	}
}

func TestPrefix(t *testing.T) {
	s := strings.Repeat("é", 10) // two bytes each
	for n := 0; n <= len(s)+1; n++ {
		got := Prefix(s, n)
		if !utf8.ValidString(got) || len(got) > n || len(got) < min(n, len(s))-1 {
			t.Fatalf("Prefix(%d) = %q (%d bytes)", n, got, len(got))
		}
	}
	if got := Prefix("abc", 2); got != "ab" {
		t.Errorf("got %q", got)
	}
}

func TestSuffix(t *testing.T) {
	s := "a" + strings.Repeat("世", 10) // three bytes each
	for n := 0; n <= len(s)+1; n++ {
		got := Suffix(s, n)
		if !utf8.ValidString(got) || len(got) > n || len(got) < min(n, len(s))-2 || !strings.HasSuffix(s, got) {
			t.Fatalf("Suffix(%d) = %q (%d bytes)", n, got, len(got))
		}
	}
	if got := Suffix("abc", 2); got != "bc" {
		t.Errorf("got %q", got)
	}
}
