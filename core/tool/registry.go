package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"reasonix/core/provider"
)

// Registry is the set of tools one run exposes to the model. It is safe for
// concurrent use: MCP servers may add or replace tools between turns.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]entry
}

type entry struct {
	tool   Tool
	schema json.RawMessage
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]entry, len(tools))}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add inserts t, canonicalising its schema. A duplicate name is an error.
func (r *Registry) Add(t Tool) error {
	return r.put(t, false)
}

// Replace inserts t, replacing any tool of the same name.
func (r *Registry) Replace(t Tool) error {
	return r.put(t, true)
}

// canonicalCache memoises Canonical by schema text: every subagent builds
// a registry of the same built-ins, and re-parsing nine schemas each time
// costs a third of a millisecond per subagent.
var canonicalCache sync.Map // string → json.RawMessage

func canonicalCached(schema json.RawMessage) (json.RawMessage, error) {
	key := string(schema)
	if v, ok := canonicalCache.Load(key); ok {
		return v.(json.RawMessage), nil
	}
	c, err := Canonical(schema)
	if err != nil {
		return nil, err
	}
	canonicalCache.Store(key, c)
	return c, nil
}

func (r *Registry) put(t Tool, replace bool) error {
	schema, err := canonicalCached(t.Schema())
	if err != nil {
		return fmt.Errorf("tool %q schema: %w", t.Name(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name()]; dup && !replace {
		return fmt.Errorf("tool %q registered twice", t.Name())
	}
	r.tools[t.Name()] = entry{tool: t, schema: schema}
	return nil
}

// Remove deletes the named tool; removing an absent tool is a no-op.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tools, name)
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e.tool, ok
}

// Names lists the tool names in sorted order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.tools))
	for n := range r.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Len is the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Schemas returns the tool schemas sorted by name, each with its canonical
// parameters, ready to put in a provider.Request.
func (r *Registry) Schemas() []provider.ToolSchema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]provider.ToolSchema, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, provider.ToolSchema{
			Name:        e.tool.Name(),
			Description: e.tool.Description(),
			Parameters:  e.schema,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Filter returns a new registry with the tools keep accepts, e.g. the
// read-only subset for a research subagent.
func (r *Registry) Filter(keep func(Tool) bool) *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &Registry{tools: make(map[string]entry, len(r.tools))}
	for n, e := range r.tools {
		if keep(e.tool) {
			out.tools[n] = e
		}
	}
	return out
}

// Canonical returns schema with object keys sorted and whitespace removed.
// Numbers keep their original text. An empty schema becomes the empty
// object schema {"type":"object"}.
func Canonical(schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonicalise schema: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonicalise schema: trailing data")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("canonicalise schema: not a JSON object")
	}
	// encoding/json writes map keys in sorted order, which is the
	// canonical form; HTML escaping is off so "<" stays readable.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonicalise schema: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// Set is an immutable snapshot of a Registry: the tools one turn works
// with. A registry change after the snapshot (an MCP server relisting its
// tools) never reaches a turn in progress, so a call approved late still
// finds the tool it was approved for, and the turn's schemas never change
// under it.
type Set struct {
	tools   map[string]Tool
	names   []string
	schemas []provider.ToolSchema
}

// Snapshot returns the registry's current tools as a Set.
func (r *Registry) Snapshot() *Set {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := &Set{tools: make(map[string]Tool, len(r.tools)), names: make([]string, 0, len(r.tools))}
	for n, e := range r.tools {
		s.tools[n] = e.tool
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
	s.schemas = make([]provider.ToolSchema, 0, len(s.names))
	for _, n := range s.names {
		e := r.tools[n]
		s.schemas = append(s.schemas, provider.ToolSchema{Name: n, Description: e.tool.Description(), Parameters: e.schema})
	}
	return s
}

// Get returns the named tool.
func (s *Set) Get(name string) (Tool, bool) {
	t, ok := s.tools[name]
	return t, ok
}

// Names lists the tool names in sorted order. The slice is shared: do not
// modify it.
func (s *Set) Names() []string { return s.names }

// Schemas returns the tool schemas sorted by name. The slice is shared: do
// not modify it.
func (s *Set) Schemas() []provider.ToolSchema { return s.schemas }

// Len is the number of tools.
func (s *Set) Len() int { return len(s.names) }
