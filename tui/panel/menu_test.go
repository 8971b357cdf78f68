package panel

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func items(labels ...string) []Item {
	out := make([]Item, len(labels))
	for i, l := range labels {
		out[i] = Item{Label: l, Value: "v:" + l}
	}
	return out
}

func TestMenuView(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		items    []Item
		moves    []int
		width    int
		rows     int
		lines    int
		selected string
		visible  string
	}{
		{"empty", nil, nil, 40, 5, 0, "", ""},
		{"fewer items than rows", items("a", "b"), nil, 40, 5, 2, "v:a", "> a"},
		{"rows bound the lines", items("a", "b", "c", "d", "e", "f"), nil, 40, 3, 3, "v:a", "> a"},
		{"selection scrolls into view", items("a", "b", "c", "d", "e", "f"), []int{4}, 40, 3, 3, "v:e", "> e"},
		{"up from the first wraps to the last", items("a", "b", "c", "d"), []int{-1}, 40, 2, 2, "v:d", "> d"},
		{"down from the last wraps to the first", items("a", "b"), []int{1, 1}, 40, 2, 2, "v:a", "> a"},
		{"dir gets a slash", []Item{{Label: "src", Value: "@src/", Dir: true}}, nil, 40, 2, 1, "@src/", "> src/"},
		{"zero rows", items("a"), nil, 40, 0, 0, "v:a", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := NewMenu()
			m.SetItems(tc.items)
			for _, d := range tc.moves {
				m.Move(d)
			}
			out := m.View(tc.width, tc.rows)
			n := 0
			if out != "" {
				n = len(strings.Split(out, "\n"))
			}
			if n != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tc.lines, out)
			}
			it, ok := m.Selected()
			if it.Value != tc.selected || ok != (tc.selected != "") {
				t.Errorf("selected %q (%v), want %q", it.Value, ok, tc.selected)
			}
			if tc.visible != "" && !strings.Contains(ansi.Strip(out), tc.visible) {
				t.Errorf("view lacks %q:\n%s", tc.visible, ansi.Strip(out))
			}
		})
	}
}

func TestMenuSetItemsKeepsSelection(t *testing.T) {
	t.Parallel()
	m := NewMenu()
	m.SetItems(items("alpha", "beta", "gamma"))
	m.Move(2)
	m.SetItems(items("beta", "gamma"))
	if it, _ := m.Selected(); it.Value != "v:gamma" {
		t.Errorf("narrowing lost the selection: %q", it.Value)
	}
	m.SetItems(items("delta"))
	if it, _ := m.Selected(); it.Value != "v:delta" {
		t.Errorf("a list without the selected item should select its first: %q", it.Value)
	}
}

func TestMenuWidth(t *testing.T) {
	t.Parallel()
	m := NewMenu()
	m.SetItems([]Item{
		{Label: "非常长的文件名称用于测试宽字符截断.md", Detail: "说明文字也很长很长很长", Value: "x"},
		{Label: "b", Detail: strings.Repeat("d", 100), Value: "y"},
	})
	for _, w := range []int{1, 4, 10, 25, 60} {
		checkLines(t, m.View(w, 2), w)
	}
	if first := strings.Split(m.View(60, 2), "\n")[0]; !strings.Contains(first, "\x1b[7m") {
		t.Errorf("the selected line is not highlighted: %q", first)
	}
}
