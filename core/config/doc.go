// Package config loads Reasonix's TOML configuration and answers questions
// about it: which model a reference names, which key a provider uses, and
// where each effective value came from.
//
// Load merges up to four layers, lowest precedence first: built-in defaults,
// the user config (<home>/config.toml), the project reasonix.toml and an
// explicit --config file. A higher layer replaces a value only for keys it
// actually writes, so an explicit false or 0 overrides; [[providers]],
// [[plugins]] and [[workers]] merge by name, tables of free-form keys merge
// key by key and lists replace, except sandbox.forbid_read,
// permissions.deny and permissions.ask, which every layer adds to and none
// can shorten.
//
// The project file is a stranger's until the user trusts the workspace
// (Options.TrustProject, decided by package trust). Trusted or not, it
// cannot loosen the sandbox, configure serve, pick executables, configure
// remote workers ([remote], [[workers]]), turn prompts off with
// permissions.mode = "allow" or point a provider the user declared (or the
// built-in one) at another endpoint or key; each such key becomes a
// warning. Untrusted, it may only tighten: its allow rules, a laxer
// permissions.mode or agent.subagent_ask, agent.system_prompt_file, every
// [[providers]] and [[plugins]] entry, and model references that would
// move the conversation to another provider than the user's default are
// left out and listed in Config.Untrusted, which UntrustedNotice renders as
// the one line a frontend shows.
//
// Load never prints. Unknown keys, retired keys and refused project keys are
// collected in Config.Warnings; malformed files fail with the file and line;
// invalid values fail with one ValidationError listing every problem. Per-key
// command-line flags are applied by the caller afterwards on the returned
// Config (see SetDefaultModel and SetSource).
package config
