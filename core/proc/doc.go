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
// Start and Wait keep a process-wide record of the groups this process
// started and has not yet waited for, and KillAll kills them all within a
// deadline: the way out for a process that must exit without waiting for
// its work to stop (a second Ctrl-C), so that nothing it started outlives
// it. On Linux a child started in a group also gets SIGKILL when this
// process dies, whatever the way; its own children do not, which is why
// KillAll goes by group. The kernel ties that signal to the forking thread,
// not the process; setDeathSignal says why that is safe here.
//
// Every function takes the *exec.Cmd; those that signal do nothing before
// the command has started.
package proc
