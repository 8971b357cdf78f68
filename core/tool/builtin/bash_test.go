package builtin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	t.Parallel()
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line %04d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{
			name:   "fits",
			limit:  100,
			writes: []string{"hello ", "world\n"},
			want:   "hello world\n",
		},
		{
			name:   "exactly the limit",
			limit:  10,
			writes: []string{"0123456789"},
			want:   "0123456789",
		},
		{
			name:   "one byte over, no line breaks",
			limit:  10,
			writes: []string{"0123456789a"},
			want:   "01234\n[... 1 bytes truncated ...]\n6789a",
		},
		{
			name:   "many small writes wrap the ring",
			limit:  8,
			writes: strings.Split("abcdefghijklmnopqrstuvwxyz", ""),
			want:   "abcd\n[... 18 bytes truncated ...]\nwxyz",
		},
		{
			name:   "cuts at line breaks",
			limit:  100,
			writes: []string{lines(1, 100)},
			// Head: 50 bytes hold 5 lines; tail: the last 50 bytes start
			// exactly at a line, so both keep whole lines.
			want: lines(1, 5) + "[... 900 bytes truncated ...]\n" + lines(96, 100),
		},
		{
			name:   "does not split runes",
			limit:  9,
			writes: []string{strings.Repeat("é", 10)}, // 20 bytes, 2 per rune
			want:   "éé\n[... 12 bytes truncated ...]\néé",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHeadTail(tc.limit)
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := string(h.Bytes())
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8: %q", got)
			}
		})
	}
}

// TestHeadTailMemory writes 100 MB and checks the buffer never grows past
// its limit.
func TestHeadTailMemory(t *testing.T) {
	t.Parallel()
	const limit = 4096
	h := newHeadTail(limit)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	for range (100 << 20) / len(chunk) {
		_, _ = h.Write(chunk)
	}
	if held := cap(h.head) + cap(h.ring); held > limit+1 {
		t.Errorf("holding %d bytes, limit %d", held, limit)
	}
	if h.total != 100<<20 {
		t.Errorf("total = %d", h.total)
	}
	if out := h.Bytes(); len(out) > limit+64 {
		t.Errorf("result is %d bytes", len(out))
	}
}
