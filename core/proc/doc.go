// Package proc covers process groups: start a command in its own group and
// kill the whole group, so that a shell's or a server's children end with
// it instead of outliving the agent.
//
// On Unix the command leads a new process group. TerminateGroup sends it
// SIGTERM, KillGroup SIGKILL; the group outlives its leader while any
// member lives, so both also reach what the leader left behind, and its id
// cannot be reused meanwhile, so they never reach an unrelated process.
//
// On Windows the command starts in a new process group, which keeps console
// Ctrl+C aimed at the agent from reaching it. There is no gentle stop for a
// console-less child, so TerminateGroup kills too: taskkill /T /F ends the
// tree by following parent links, which finds children only while the
// leader is alive, and the leader is then killed directly in case taskkill
// is unavailable. Elsewhere only the leader itself can be killed.
//
// Every function takes the *exec.Cmd; those that signal do nothing before
// the command has started.
package proc
