package tool

import (
	"fmt"
	"sort"
	"sync"
)

// Factory builds a built-in tool for one run's Env.
type Factory func(env Env) Tool

var (
	builtinMu sync.RWMutex
	builtins  = map[string]Factory{}
)

// RegisterBuiltin adds a built-in tool factory under name. It is called from
// init in the builtin subpackage and panics on a duplicate name.
func RegisterBuiltin(name string, f Factory) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if _, dup := builtins[name]; dup {
		panic(fmt.Sprintf("tool: builtin %q registered twice", name))
	}
	builtins[name] = f
}

// Builtins lists the registered built-in tool names in sorted order.
func Builtins() []string {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NewBuiltins instantiates the built-ins named in enabled for env; an empty
// enabled list means all of them. An unknown name is an error that lists the
// known ones.
func NewBuiltins(env Env, enabled []string) ([]Tool, error) {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	names := enabled
	if len(names) == 0 {
		names = make([]string, 0, len(builtins))
		for n := range builtins {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	out := make([]Tool, 0, len(names))
	for _, n := range names {
		f, ok := builtins[n]
		if !ok {
			known := make([]string, 0, len(builtins))
			for k := range builtins {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("unknown built-in tool %q (known: %v)", n, known)
		}
		out = append(out, f(env))
	}
	return out, nil
}
