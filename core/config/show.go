package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Redacted replaces secret values in Show's output.
const Redacted = "***"

// Show renders the effective configuration as TOML, each key followed by a
// "# from <source>" comment. Secrets are replaced by Redacted: plugin env
// and header values, and every string whose key mentions a key, token,
// secret or password (except *_env keys, which only name a variable, and
// paths: *_file keys and remote.tls_key). Map
// keys are sorted, so equal configs render identically. The output is valid
// TOML; an error means a value could not be rendered as such.
func (c *Config) Show() (string, error) {
	r := &renderer{c: c}
	r.b.WriteString("# Effective Reasonix configuration; the comment after each key names the file that set it.\n")
	r.table(reflect.ValueOf(c).Elem(), nil)
	out := r.b.String()
	var check map[string]any
	if _, err := toml.Decode(out, &check); err != nil {
		return "", fmt.Errorf("render config: %w", err)
	}
	return out, nil
}

type renderer struct {
	c *Config
	b strings.Builder
}

// table writes the plain keys of a struct, then its sub-tables, tables of
// free-form keys and arrays of tables, in schema order.
func (r *renderer) table(v reflect.Value, path []string) {
	t := v.Type()
	var later []int
	for i := 0; i < t.NumField(); i++ {
		name := tomlName(t.Field(i))
		if name == "" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && f.IsNil() {
			continue // unset optional value: nothing to show
		}
		if isTableLike(f) {
			later = append(later, i)
			continue
		}
		p := appendPath(path, name)
		r.line(name, r.inline(f, p), r.c.sourceFor(dotted(p)))
	}
	for _, i := range later {
		name := tomlName(t.Field(i))
		f := v.Field(i)
		p := appendPath(path, name)
		switch f.Kind() {
		case reflect.Struct:
			fmt.Fprintf(&r.b, "\n[%s]\n", dotted(p))
			r.table(f, p)
		case reflect.Map:
			fmt.Fprintf(&r.b, "\n[%s]\n", dotted(p))
			for _, k := range sortedMapKeys(f) {
				kp := appendPath(p, k)
				r.line(quoteKey(k), r.inline(f.MapIndex(reflect.ValueOf(k)), kp), r.c.sourceFor(dotted(kp)))
			}
		case reflect.Slice:
			for j := 0; j < f.Len(); j++ {
				fmt.Fprintf(&r.b, "\n[[%s]]\n", dotted(p))
				r.entry(f.Index(j), p)
			}
		}
	}
}

// entry writes one [[providers]] or [[plugins]] entry; its maps stay
// inline because the entry is replaced as a whole and has one source.
func (r *renderer) entry(v reflect.Value, path []string) {
	prefix := EntryKey(dotted(path), v.FieldByName("Name").String())
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := tomlName(t.Field(i))
		if name == "" {
			continue
		}
		r.line(name, r.inline(v.Field(i), appendPath(path, name)), r.c.SourceOf(prefix+"."+name))
	}
}

func (r *renderer) line(key, value, source string) {
	fmt.Fprintf(&r.b, "%s = %s  # from %s\n", key, value, strings.ReplaceAll(source, "\n", " "))
}

// isTableLike reports whether a field renders as its own table: structs,
// arrays of tables and non-empty maps (empty maps render inline as {}).
func isTableLike(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Struct:
		return true
	case reflect.Map:
		return f.Len() > 0
	case reflect.Slice:
		return f.Type().Elem().Kind() == reflect.Struct
	}
	return false
}

// inline renders a value as a TOML inline value. path is the schema path
// of the value (array entries contribute no index), used for redaction.
func (r *renderer) inline(v reflect.Value, path []string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return `""`
		}
		return r.inline(v.Elem(), path)
	case reflect.String:
		return QuoteString(redact(path, v.String()))
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return formatFloat(v.Float())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = r.inline(v.Index(i), path)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		if v.Len() == 0 {
			return "{}"
		}
		keys := sortedMapKeys(v)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = quoteKey(k) + " = " + r.inline(v.MapIndex(reflect.ValueOf(k)), appendPath(path, k))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case reflect.Struct:
		var parts []string
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			// A zero field of an inline entry (a model override) means
			// "inherit"; showing it would suggest it was set.
			if name := tomlName(t.Field(i)); name != "" && !v.Field(i).IsZero() {
				parts = append(parts, name+" = "+r.inline(v.Field(i), appendPath(path, name)))
			}
		}
		if len(parts) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return QuoteString(fmt.Sprint(v.Interface()))
}

// redact hides a non-empty string when its path marks it as a secret.
func redact(path []string, s string) string {
	if s == "" || len(path) == 0 {
		return s
	}
	if len(path) >= 3 && path[0] == "plugins" && (path[1] == "env" || path[1] == "headers") {
		return Redacted
	}
	last := strings.ToLower(path[len(path)-1])
	// *_env keys only name a variable, and *_file keys and the TLS key
	// path only name a file: the secret is elsewhere.
	if strings.HasSuffix(last, "_env") || strings.HasSuffix(last, "_file") || path[0] == "remote" && last == "tls_key" {
		return s
	}
	for _, w := range []string{"key", "token", "secret", "password"} {
		if strings.Contains(last, w) {
			return Redacted
		}
	}
	return s
}

// QuoteString spells s as a TOML basic string: double quotes, with the
// quote, the backslash, \n, \r and \t escaped by their short forms and every
// other control character (and DEL) as \uXXXX. Every string is valid in
// this form, and the spelling is part of the Sources keys EntryKey builds.
func QuoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
