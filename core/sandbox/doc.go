// Package sandbox is the enforcement layer beneath permissions: it decides
// which files the built-in tools may write or read, and it jails shell
// commands with the operating system's sandbox.
//
// A Sandbox is built once per run from the [sandbox] settings. Every root it
// holds is an absolute, symlink-free path, and every path it checks is
// resolved the way the kernel would resolve it (symlinks followed, ".."
// taken after the symlink before it) before it is compared, on whole path
// components, with those roots. A path, or trailing components of it, may
// not exist yet: the deepest existing ancestor is resolved and the rest is
// appended, and a ".." below that point is refused because nothing on disk
// says where it leads.
//
// Writes (WritePath, which write_file, edit_file, multi_edit and move_file
// use for every path they touch, including both ends of a move) are allowed
// only under the workspace root and the allow_write roots. An existing
// regular file with more than one hard link is refused as a write target:
// its other names may lie outside the roots and nothing cheap tells where,
// so a hard link must never become a way to edit a file the roots do not
// cover. Reads (ReadPath, and Forbidden for tools that walk directories)
// are allowed anywhere except under a forbid_read entry or a secret (the
// credential files the caller names), and those refuse writes too, so a
// secret cannot be replaced either.
//
// The Reasonix home holds the configuration that confines the agent and
// the user's credentials, so it is the user's alone: file tools may
// neither read nor write anything that resolves into it or is spelled
// inside it, even when it lies in the workspace or an allow_write root,
// and a workspace inside the home is closed to them as a whole (the home
// wins; Notes says so). The memory tools keep their part of it without
// going through the guard. When the caller sets a PathRule (the permission
// policy's deny rules), every check asks it too, about the resolved path
// and the spelling both, so a deny rule holds for every file tool and
// every walk.
//
// The workspace's trust-bearing paths (reasonix.toml, .mcp.json,
// .reasonix except the memory and autoresearch directories the product
// writes, .git/config and .git/hooks) decide what later runs trust.
// WritePath does not refuse them; Protected reports them, through
// symlinks too, so the session can ask a person before each such write.
//
// Shell commands go through Wrap. With bash = "enforce" the command runs in
// bubblewrap on Linux or under a Seatbelt profile on macOS: the filesystem
// is read-only except for the same roots plus a short list of temporary and
// cache directories; the Reasonix home and the trust-bearing workspace
// paths that exist stay read-only inside them, and no directory above one
// of those can be renamed, so none can be replaced either; forbid_read
// paths and secrets are hidden; and the network is cut off unless
// network = true. When enforce is asked for and no backend exists, Wrap
// refuses the command rather than run it unconfined. Windows has no
// backend: the mode is always off there and Notes says so.
//
// A writer subagent gets a narrower sandbox from Narrow: its file tools may
// write only the task's write_paths, and its jailed commands see the
// workspace read-only except those paths, so two writers with disjoint
// claims cannot clobber each other through the shell either. Everything
// above holds for it as well. With bash = "off" nothing could hold a
// command to the claims, so such a sandbox refuses commands instead.
//
// The checks are made when a tool asks, not when it writes, so a process
// racing the tool (swapping a directory for a symlink in between) is not
// stopped by the path checks alone; shell commands, the usual source of
// such races, run inside the jail.
package sandbox
