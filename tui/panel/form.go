package panel

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
	"reasonix/core/mcp"
)

// formField is one field of an MCP elicitation form, from the request's
// schema: a string, number, integer, boolean or a choice among enum values.
type formField struct {
	name, title, desc string
	// kind is "string", "number", "integer", "boolean", "enum" (one of
	// options) or "multi" (any of options, picked marks them).
	kind     string
	required bool
	// options are the values an enum or multi field takes, labels what
	// the form shows of each (a titled enum's titles).
	options, labels []string
	text            string
	on              bool
	choice          int
	picked          []bool
}

// schemaOption is one titled choice of a oneOf or anyOf list.
type schemaOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// Form is an MCP server's elicitation request drawn as a form: enter
// accepts with the fields' values, esc declines, ctrl+c cancels. It only
// draws and collects; the chat sends the answer.
type Form struct {
	req    *event.ElicitationRequested
	fields []*formField
	sel    int
	err    string
}

// NewForm reads the fields from the request's schema (properties in the
// order of the schema's required list, then by name).
func NewForm(e *event.ElicitationRequested) *Form {
	f := &Form{req: e}
	var schema struct {
		Properties map[string]struct {
			Type        string         `json:"type"`
			Title       string         `json:"title"`
			Description string         `json:"description"`
			Enum        []string       `json:"enum"`
			EnumNames   []string       `json:"enumNames"`
			OneOf       []schemaOption `json:"oneOf"`
			Default     any            `json:"default"`
			Items       struct {
				Enum  []string       `json:"enum"`
				AnyOf []schemaOption `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(e.Schema, &schema) != nil {
		return f
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := slices.Index(schema.Required, names[i]), slices.Index(schema.Required, names[j])
		if (ri >= 0) != (rj >= 0) {
			return ri >= 0
		}
		if ri >= 0 {
			return ri < rj
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		p := schema.Properties[n]
		fd := &formField{name: n, title: p.Title, desc: p.Description, kind: p.Type, required: slices.Contains(schema.Required, n)}
		if fd.title == "" {
			fd.title = n
		}
		switch {
		case len(p.Enum) > 0:
			fd.kind, fd.options, fd.labels = "enum", p.Enum, p.EnumNames
		case len(p.OneOf) > 0:
			fd.kind = "enum"
			for _, o := range p.OneOf {
				fd.options, fd.labels = append(fd.options, o.Const), append(fd.labels, o.Title)
			}
		case p.Type == "array" && len(p.Items.Enum) > 0:
			fd.kind, fd.options = "multi", p.Items.Enum
		case p.Type == "array" && len(p.Items.AnyOf) > 0:
			fd.kind = "multi"
			for _, o := range p.Items.AnyOf {
				fd.options, fd.labels = append(fd.options, o.Const), append(fd.labels, o.Title)
			}
		}
		if len(fd.labels) != len(fd.options) {
			fd.labels = fd.options
		}
		fd.picked = make([]bool, len(fd.options))
		switch d := p.Default.(type) {
		case []any:
			for _, v := range d {
				if i := slices.Index(fd.options, fmt.Sprint(v)); i >= 0 {
					fd.picked[i] = true
				}
			}
		case bool:
			fd.on = d
		case string:
			fd.text = d
			if i := slices.Index(fd.options, d); i >= 0 {
				fd.choice = i
			}
		case float64:
			fd.text = strconv.FormatFloat(d, 'f', -1, 64)
		}
		f.fields = append(f.fields, fd)
	}
	return f
}

// Request is the elicitation request the form answers.
func (f *Form) Request() *event.ElicitationRequested { return f.req }

// View draws the form width cells wide.
func (f *Form) View(width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s asks:\n", styleRunning.Render(f.req.Server))
	b.WriteString(ansi.Wrap(f.req.Message, max(width, 10), "") + "\n")
	if f.req.URL != "" {
		b.WriteString("  " + f.req.URL + "\n")
	}
	for i, fd := range f.fields {
		label := fd.title
		if fd.required {
			label += "*"
		}
		line := label + ": " + fd.shown(i == f.sel)
		if i == f.sel {
			b.WriteString(styleSelected.Render("› "+line) + "\n")
			if fd.desc != "" {
				b.WriteString(styleFaint.Render("    "+ansi.Truncate(clean(fd.desc), max(width-6, 10), "…")) + "\n")
			}
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
	if f.err != "" {
		b.WriteString(styleFailed.Render(f.err) + "\n")
	}
	hint := "tab/↑/↓ field · enter send · esc decline · ctrl+c cancel"
	if len(f.fields) == 0 {
		hint = "enter accept · esc decline · ctrl+c cancel"
	}
	b.WriteString(styleFaint.Render(hint))
	return b.String()
}

// shown is the field's value as the form draws it.
func (fd *formField) shown(focused bool) string {
	switch fd.kind {
	case "boolean":
		if fd.on {
			return "[x] (space toggles)"
		}
		return "[ ] (space toggles)"
	case "enum":
		return "‹ " + fd.labels[fd.choice] + " ›  (←/→)"
	case "multi":
		var parts []string
		for i, l := range fd.labels {
			mark := "[ ]"
			if fd.picked[i] {
				mark = "[x]"
			}
			if focused && i == fd.choice {
				l = "‹" + l + "›"
			}
			parts = append(parts, mark+" "+l)
		}
		return strings.Join(parts, "  ") + "  (←/→, space)"
	}
	if focused {
		return fd.text + "▏"
	}
	return fd.text
}

// Key handles a key. done says the form is answered, with action (accept,
// decline or cancel) and, for accept, Content.
func (f *Form) Key(k tea.KeyPressMsg) (action string, done bool) {
	var fd *formField
	if len(f.fields) > 0 {
		fd = f.fields[f.sel]
	}
	switch s := k.String(); s {
	case "esc":
		return mcp.ElicitDecline, true
	case "ctrl+c":
		return mcp.ElicitCancel, true
	case "tab", "down":
		f.sel = min(f.sel+1, max(len(f.fields)-1, 0))
	case "shift+tab", "up":
		f.sel = max(f.sel-1, 0)
	case "enter":
		if _, err := f.Content(); err != "" {
			f.err = err
			return "", false
		}
		return mcp.ElicitAccept, true
	case "left", "right":
		if fd != nil && (fd.kind == "enum" || fd.kind == "multi") {
			step := 1
			if s == "left" {
				step = len(fd.options) - 1
			}
			fd.choice = (fd.choice + step) % len(fd.options)
		}
	case "space":
		switch {
		case fd == nil:
		case fd.kind == "boolean":
			fd.on = !fd.on
		case fd.kind == "multi":
			fd.picked[fd.choice] = !fd.picked[fd.choice]
		case fd.kind != "enum":
			fd.text += " "
		}
	case "backspace":
		if fd != nil {
			if r := []rune(fd.text); len(r) > 0 {
				fd.text = string(r[:len(r)-1])
			}
		}
	default:
		if fd != nil && k.Text != "" && fd.kind != "boolean" && fd.kind != "enum" && fd.kind != "multi" {
			fd.text += k.Text
		}
	}
	return "", false
}

// Content is the answer's values by field name, typed as the schema says;
// an empty optional field is left out. err names the first field that is
// missing or not of its type.
func (f *Form) Content() (map[string]any, string) {
	out := map[string]any{}
	for _, fd := range f.fields {
		v := strings.TrimSpace(fd.text)
		switch fd.kind {
		case "boolean":
			out[fd.name] = fd.on
			continue
		case "enum":
			out[fd.name] = fd.options[fd.choice]
			continue
		case "multi":
			var vals []any
			for i, on := range fd.picked {
				if on {
					vals = append(vals, fd.options[i])
				}
			}
			if len(vals) == 0 && fd.required {
				return nil, fd.title + " needs at least one choice"
			}
			if len(vals) > 0 {
				out[fd.name] = vals
			}
			continue
		}
		if v == "" {
			if fd.required {
				return nil, fd.title + " is required"
			}
			continue
		}
		switch fd.kind {
		case "number":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fd.title + " must be a number"
			}
			out[fd.name] = n
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fd.title + " must be a whole number"
			}
			out[fd.name] = n
		default:
			out[fd.name] = v
		}
	}
	return out, ""
}
