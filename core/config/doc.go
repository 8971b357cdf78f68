// Package config loads Reasonix's TOML configuration and answers questions
// about it: which model a reference names, which key a provider uses, and
// where each effective value came from.
//
// Load merges up to four layers, lowest precedence first: built-in defaults,
// the user config (<home>/config.toml), the project reasonix.toml and an
// explicit --config file. A higher layer replaces a value only for keys it
// actually writes, so an explicit false or 0 overrides; [[providers]],
// [[plugins]] and [[workers]] merge by name, tables of free-form keys merge
// key by key and lists replace, except sandbox.forbid_read, which only ever
// grows. The project file is untrusted: it cannot loosen the sandbox,
// configure serve, pick executables, configure remote workers ([remote],
// [[workers]]) or point a provider the user declared (or the built-in one)
// at another endpoint or key, and every such key it tries to set becomes a
// warning.
//
// Load never prints. Unknown keys, retired keys and refused project keys are
// collected in Config.Warnings; malformed files fail with the file and line;
// invalid values fail with one ValidationError listing every problem. Per-key
// command-line flags are applied by the caller afterwards on the returned
// Config (see SetDefaultModel and SetSource).
package config
