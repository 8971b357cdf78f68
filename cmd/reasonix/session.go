package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/panics"
	"reasonix/core/permission"
	"reasonix/core/proc"
)

// checkHeadlessFlags validates the flags every headless command shares
// (`run`, `subagent try|run`), so they fail alike and before any work.
func checkHeadlessFlags(format string, maxSteps int, permissionMode string, deny []string) error {
	if !slices.Contains(outputFormats, format) {
		return usageErrorf("--output-format %q: want one of %s", format, strings.Join(outputFormats, ", "))
	}
	if maxSteps < 0 {
		return usageErrorf("--max-steps must be 0 (no limit) or positive, got %d", maxSteps)
	}
	if _, err := permission.ParsePosture(permissionMode); err != nil {
		return usageErrorf("--permission-mode: %v", err)
	}
	for _, r := range deny {
		if _, err := permission.ParseRule(r); err != nil {
			return usageErrorf("--deny %q: %v", r, err)
		}
	}
	return nil
}

// headlessTurn is one turn of a fresh session run without the TUI.
type headlessTurn struct {
	// what names the command in the log: "run" or "subagent".
	what string
	// spec describes the session; its Agent.Bus is set by runHeadless and
	// spec.Transcript is what the output reports.
	spec   actors.SessionSpec
	prompt string
	format string
	// answerOnly keeps streamed text off stdout in text format and prints
	// the final answer instead: a subagent's caller sees its result, not
	// its intermediate narration.
	answerOnly bool
	// commands, when set, is a stream of JSON commands (one per line) that
	// drives the session until it ends; prompt, if any, runs first.
	commands io.Reader
	// prep, when set, expands each prompt (custom commands, @references)
	// before the session sees it.
	prep *promptPrep
}

// forceKillTimeout bounds how long a second interrupt waits for the killed
// process groups to be reaped before the command returns anyway.
const forceKillTimeout = time.Second

// runHeadless runs one turn of a fresh session to its end, renders its
// events in t.format and shuts the actor system down. The first SIGINT or
// SIGTERM cancels the turn and lets it stop cleanly. A second kills every
// process group this process started and gives up on the turn and its
// cleanup, so the command ends within forceKillTimeout whatever a tool or
// server is doing. The outcome becomes the command's error: errInterrupted,
// nil for a finished turn, or errSilent when the turn failed (the output
// already says why).
func runHeadless(f *Factory, t headlessTurn) error {
	spec := t.spec
	logger := spec.Agent.Logger
	sys := kernel.NewSystem(logger)
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	spec.Agent.Bus = bus
	sess, err := actors.StartSession(sys, spec)
	if err != nil {
		return err
	}

	out := newRenderer(t.format, f.Stdout, f.Stderr)
	each := out.event
	if t.answerOnly && t.format == "text" {
		each = func(ev event.Event) {
			if _, ok := ev.(*event.TextDelta); !ok {
				out.event(ev)
			}
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// turnCtx is the wait for the turn, which a second signal abandons.
	turnCtx, abandon := context.WithCancel(context.Background())
	defer abandon()
	// The signal watcher runs until stop is closed and is waited for
	// before interrupted and forced, which it closes, are read.
	stop := make(chan struct{})
	interrupted := make(chan struct{})
	forced := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-sigs:
			close(interrupted)
			logger.Info("interrupt: cancelling the turn")
			sess.Cancel()
		case <-stop:
			return
		}
		select {
		case <-sigs:
			// A second signal means the user does not want to wait for a
			// clean stop; what we started must not outlive us all the same.
			logger.Warn("second interrupt: killing child processes and exiting")
			if err := proc.KillAll(forceKillTimeout); err != nil {
				logger.Warn("second interrupt", "err", err)
			}
			close(forced)
			abandon()
		case <-stop:
		}
	}()
	isForced := func() bool {
		select {
		case <-forced:
			return true
		default:
			return false
		}
	}

	var done *event.TurnDone
	prepare := t.preparer(f.Stderr, bus, spec.Agent.Session)
	if t.commands != nil {
		done, err = driveCommands(turnCtx, commandDriver{sess: sess, bus: bus, sub: sub, session: spec.Agent.Session,
			each: each, interrupted: interrupted, prepare: prepare}, t.commands, t.prompt)
	} else {
		sess.Run(prepare(turnCtx, t.prompt))
		done, err = actors.WaitTurn(turnCtx, sub, spec.Agent.Session, each)
	}
	// The clean stop can hang on a tool or server that ignores it, so it
	// runs aside and a second signal leaves it behind, to end with the
	// process.
	var closeErr, shutErr error
	if !isForced() {
		cleaned := make(chan struct{})
		go func() {
			defer close(cleaned)
			closeErr = sess.Close(10 * time.Second)
			shutCtx, shutCancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer shutCancel()
			shutErr = sys.Shutdown(shutCtx)
		}()
		select {
		case <-cleaned:
		case <-forced:
		}
	}
	close(stop)
	<-watcher
	if isForced() {
		logger.Warn(t.what + " abandoned after a second interrupt")
		return errInterrupted
	}
	select {
	case <-interrupted:
		// Whatever a tool that ignored the cancellation left running is
		// killed rather than orphaned.
		if err := proc.KillAll(forceKillTimeout); err != nil {
			logger.Warn("interrupt", "err", err)
		}
	default:
	}
	if err != nil {
		return fmt.Errorf("wait for turn: %w", err)
	}
	if done == nil { // a command stream that sent no prompt
		logger.Info(t.what + " finished without a turn")
		select {
		case <-interrupted:
			return errInterrupted
		default:
			return nil
		}
	}
	if closeErr != nil || shutErr != nil {
		logger.Warn("shutdown", "close", closeErr, "shutdown", shutErr)
	}
	if t.answerOnly && t.format == "text" && (done.Status == event.StatusOK || done.Status == actors.StatusIncomplete) && done.Text != "" {
		fmt.Fprint(f.Stdout, done.Text)
		if !strings.HasSuffix(done.Text, "\n") {
			fmt.Fprintln(f.Stdout)
		}
	}
	if err := out.finish(done, spec.Transcript); err != nil {
		return err
	}
	logger.Info(t.what+" finished", "status", done.Status, "steps", done.Steps)
	select {
	case <-interrupted:
		return errInterrupted
	default:
	}
	switch done.Status {
	case event.StatusCancelled:
		return errInterrupted
	case event.StatusOK:
		return nil
	default:
		return errSilent
	}
}

// commandDriver is what driveCommands needs of a running session.
type commandDriver struct {
	sess    *actors.Session
	bus     *event.Bus
	sub     *event.Subscription
	session string
	each    func(event.Event)
	// interrupted is closed at the first SIGINT: the driver then ends
	// with the turn that was running.
	interrupted <-chan struct{}
	// prepare readies a prompt's text for the session (see
	// headlessTurn.preparer); nil sends prompts as they came.
	prepare func(context.Context, string) string
}

// driveCommands feeds the session one JSON command per line of r (see
// docs/SPEC.md, Commands) and renders its events until r ends and every
// prompt it sent has had its turn, or an interrupt ends the running turn.
// A line that is not a valid command becomes an error event; the stream
// goes on. It returns the last turn_done of the session (nil when no prompt
// ran).
//
// The end of r is the frontend going away: nobody is left to answer an
// approval or an MCP server's question, so from then on each is answered
// at once (denied with actors.NoFrontendLeft, declined), those pending
// included, and the prompts still queued run to their end instead of
// waiting behind a call nobody will approve.
//
// The reader goroutine cannot be stopped while it waits on r (a read from
// stdin does not take a context); it ends at EOF, or with the process.
func driveCommands(ctx context.Context, d commandDriver, r io.Reader, first string) (*event.TurnDone, error) {
	prepare := d.prepare
	if prepare == nil {
		prepare = func(_ context.Context, s string) string { return s }
	}
	if first != "" {
		d.sess.Run(prepare(ctx, first))
	}
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		defer panics.Recover(func(err error) {
			d.bus.Publish(&event.ErrorOccurred{Meta: event.Meta{Session: d.session},
				Message: fmt.Sprintf("reading commands: %v; no further commands are read", err)})
		})
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxCommandLine)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			cmd, err := event.DecodeCommand(line)
			if p, ok := cmd.(*event.PromptCmd); ok && err == nil {
				// Expanding reads files: it runs here, off the event loop,
				// and each prompt is ready before the next line is read.
				p.Text = prepare(ctx, p.Text)
			}
			if err == nil {
				err = d.sess.Do(cmd)
			}
			if err != nil {
				d.bus.Publish(&event.ErrorOccurred{Meta: event.Meta{Session: d.session},
					Message: fmt.Sprintf("command on line %d: %v", n, err)})
			}
		}
		if err := sc.Err(); err != nil {
			d.bus.Publish(&event.ErrorOccurred{Meta: event.Meta{Session: d.session},
				Message: fmt.Sprintf("reading commands: %v", err)})
		}
	}()

	var last *event.TurnDone
	unattended := d.sess.Unattended()
	// While commands may still come, events are read until the input ends
	// or an interrupt arrives; then the session is asked whether it still
	// has work, and the driver waits for each turn_done until it has none.
	reading := true
	for {
		waitCtx, stopWait := context.WithCancel(ctx)
		if reading {
			go func() {
				select {
				case <-eof:
				case <-d.interrupted:
				case <-waitCtx.Done():
				}
				stopWait()
			}()
		}
		if !reading {
			busy, err := d.sess.Busy(commandQueryTimeout)
			if err != nil {
				stopWait()
				return last, err
			}
			if !busy {
				stopWait() // drain what is already queued, then stop
			}
		}
		ev, err := d.sub.Next(waitCtx)
		stopWait()
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			if reading {
				reading = false // the input ended or an interrupt came
				if isClosed(eof) {
					unattended.Leave()
				}
				continue
			}
			return last, nil // idle and drained
		}
		d.each(ev)
		unattended.Observe(ev)
		if td, ok := ev.(*event.TurnDone); ok && td.Session == d.session && td.Task == "" {
			last = td
			if isClosed(d.interrupted) {
				return last, nil
			}
		}
	}
}

// maxCommandLine bounds one command line (a prompt with a large paste).
const maxCommandLine = 16 << 20

// commandQueryTimeout bounds the session status query; the session answers
// at once unless it is wedged.
const commandQueryTimeout = 10 * time.Second

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
