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
// only under the workspace root, the Reasonix home and the allow_write
// roots. An existing regular file with more than one hard link is refused
// as a write target: its other names may lie outside the roots and nothing
// cheap tells where, so a hard link must never become a way to edit a file
// the roots do not cover. Reads (ReadPath, and Forbidden for tools that
// walk directories) are allowed anywhere except under a forbid_read entry,
// and a forbid_read entry also refuses writes, so a secret cannot be
// replaced either.
//
// Shell commands go through Wrap. With bash = "enforce" the command runs in
// bubblewrap on Linux or under a Seatbelt profile on macOS: the filesystem
// is read-only except for the same roots plus a short list of temporary and
// cache directories, forbid_read paths are hidden, and the network is cut
// off unless network = true. When enforce is asked for and no backend
// exists, Wrap refuses the command rather than run it unconfined. Windows
// has no backend: the mode is always off there and Notes says so.
//
// A writer subagent gets a narrower sandbox from Narrow: its file tools may
// write only the task's write_paths, and its jailed commands see the
// workspace read-only except those paths, so two writers with disjoint
// claims cannot clobber each other through the shell either. With bash =
// "off" nothing could hold a command to the claims, so such a sandbox
// refuses commands instead.
//
// The checks are made when a tool asks, not when it writes, so a process
// racing the tool (swapping a directory for a symlink in between) is not
// stopped by the path checks alone; shell commands, the usual source of
// such races, run inside the jail.
package sandbox
