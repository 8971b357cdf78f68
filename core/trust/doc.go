// Package trust records which workspaces the user trusts, so that a cloned
// repository's own files cannot loosen the user's rules until the user says
// so.
//
// A workspace is its absolute, symlink-resolved directory. Its
// trust-bearing files are reasonix.toml, .mcp.json and everything under
// .reasonix/ except .reasonix/memory/ and .reasonix/autoresearch/, which the
// product writes itself. Digest is a SHA-256 over their sorted relative
// paths, file modes and contents; a decision is recorded together with the
// digest of the files it was made about, so a trusted workspace whose files
// change is Changed, not Trusted, until it is trusted again, and a declined
// one is asked about again once its files change.
//
// The Store is one versioned JSON file in the Reasonix home (File), written
// atomically with mode 0600 and read again before every change so that a
// decision another process recorded meanwhile is kept. A missing file is an
// empty store; a damaged one is an error that says how to repair it, never
// silently an empty store. The package decides nothing about what a trusted
// project may do (that is the config's business) and never prints.
package trust
