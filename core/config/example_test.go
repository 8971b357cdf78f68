package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"testing"
)

// examplePath is the repository's reference config.
var examplePath = filepath.Join("..", "..", "reasonix.example.toml")

// schemaKeys returns every TOML key name the schema structs declare.
func schemaKeys(t reflect.Type, into map[string]bool) {
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name := tomlName(f); name != "" {
				into[name] = true
				schemaKeys(f.Type, into)
			}
		}
	case reflect.Slice, reflect.Map:
		schemaKeys(t.Elem(), into)
	}
}

func TestExampleNamesEveryKey(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	schemaKeys(reflect.TypeOf(Config{}), keys)
	if len(keys) < 80 {
		t.Fatalf("schema walk found only %d keys", len(keys))
	}
	var missing []string
	for k := range keys {
		// The key as written: "k =", "[k]", "[x.k]" or "k." of a dotted
		// header, commented out or not.
		re := regexp.MustCompile(`(^|[\s#{,.\[])` + regexp.QuoteMeta(k) + `(\s*=|\]|\.)`)
		if !re.Match(data) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("reasonix.example.toml does not mention %q", missing)
	}
}

func TestShippedConfigsLoadCleanly(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layout layout
	}{
		{"example as user config", layout{user: string(example)}},
		{"example as --config", layout{explicit: string(example)}},
		{"DefaultTOML as user config", layout{user: DefaultTOML}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mustLoad(t, tt.layout)
			wantWarnings(t, c.Warnings)
			if r, err := c.ResolveModel(""); err != nil || r.Model != "deepseek-v4-flash" {
				t.Errorf("default model = %q, %v", r.Model, err)
			}
		})
	}
}

// TestExampleMatchesDefaults keeps the example honest: what it sets is what
// Reasonix does with no config at all.
func TestExampleMatchesDefaults(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	fromExample, _ := mustLoad(t, layout{user: string(example)})
	builtin, _ := mustLoad(t, layout{})
	render := func(c *Config) string {
		c.Home, c.Files, c.ProjectFile, c.Warnings, c.Sources = "", nil, "", nil, nil
		for i := range c.Providers {
			c.Providers[i].ModelOverrides = nil // the example shows one, equal to the window
		}
		runLocal := c.Remote.RunLocal
		c.Remote.RunLocal = nil // a pointer: compared by value below
		return fmt.Sprintf("%+v run_local=%v", *c, *runLocal)
	}
	if a, b := render(fromExample), render(builtin); a != b {
		t.Errorf("example differs from the built-in defaults:\nexample %s\nbuiltin %s", a, b)
	}
}
