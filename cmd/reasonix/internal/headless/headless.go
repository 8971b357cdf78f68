package headless

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/panics"
	"reasonix/core/permission"
	"reasonix/core/proc"
	"reasonix/core/prompt"
)

// CheckHeadlessFlags validates the flags every headless command shares
// (`run`, `subagent try|run`), so they fail alike and before any work.
func CheckHeadlessFlags(format string, maxSteps int, permissionMode string, deny []string) error {
	if !slices.Contains(outputFormats, format) {
		return cmdutil.UsageErrorf("--output-format %q: want one of %s", format, strings.Join(outputFormats, ", "))
	}
	if maxSteps < 0 {
		return cmdutil.UsageErrorf("--max-steps must be 0 (no limit) or positive, got %d", maxSteps)
	}
	if _, err := permission.ParsePosture(permissionMode); err != nil {
		return cmdutil.UsageErrorf("--permission-mode: %v", err)
	}
	for _, r := range deny {
		if _, err := permission.ParseRule(r); err != nil {
			return cmdutil.UsageErrorf("--deny %q: %v", r, err)
		}
	}
	return nil
}

// headlessTurn is one turn of a fresh session run without the TUI.
type Turn struct {
	// what names the command in the log: "run" or "subagent".
	What string
	// built is the session; Run starts it as the chat and serve
	// do (actors.StartLive) and stops it, leaving its transcripts for the
	// caller to close. built.Spec.Transcript is what the output reports.
	Built  *actors.Built
	Prompt string
	Format string
	// answerOnly keeps streamed text off stdout in text format and prints
	// the final answer instead: a subagent's caller sees its result, not
	// its intermediate narration.
	AnswerOnly bool
	// commands, when set, is a stream of JSON commands (one per line) that
	// drives the session until it ends; prompt, if any, runs first.
	Commands io.Reader
	// prep, when set, expands each prompt (custom commands, @references)
	// before the session sees it.
	Prep *prompt.Expander
	// WaitBackground keeps the run going after its last turn while
	// background tasks it started run, and until their results have had
	// their turn; BackgroundWait bounds that (0: until they end), after
	// which the rest are cancelled.
	WaitBackground bool
	BackgroundWait time.Duration
}

// Run runs one turn of a fresh session to its end, renders its
// events in t.format and stops the session. The first SIGINT, SIGTERM or
// SIGHUP cancels the turn and lets it stop cleanly. A second kills every
// process group this process started and gives up on the turn and its
// cleanup, so the command ends within ForceKillTimeout whatever a tool or
// server is doing. The outcome becomes the command's error: ErrInterrupted,
// nil for a finished turn, or ErrSilent when the turn failed (the output
// already says why).
func Run(f *cmdutil.Factory, t Turn) error {
	logger := t.Built.Spec.Agent.Logger
	live, err := actors.StartLive(t.Built, logger)
	if err != nil {
		return err
	}
	// The bus keeps its history, so subscribing from the start misses
	// nothing the session published while it started.
	sub := live.Bus().SubscribeFrom(0, 0)
	defer sub.Close()
	sess, session := live.Session(), live.ID()

	each := t.renderer(f)
	w := watchInterrupts(logger, sess.Cancel)
	// Signals stay caught (and are ignored once the watch ends) until the
	// command returns, so a late one cannot kill the process mid-output.
	defer w.unnotify()
	var done *event.TurnDone
	prepare := t.preparer(f.Stderr, live.Bus(), session)
	if t.Commands != nil {
		done, err = driveCommands(w.turnCtx, commandDriver{sess: sess, bus: live.Bus(), sub: sub, session: session,
			each: each.event, interrupted: w.interrupted, prepare: prepare}, t.Commands, t.Prompt)
	} else {
		sess.Run(prepare(w.turnCtx, t.Prompt))
		done, err = actors.WaitTurn(w.turnCtx, sub, session, each.event)
	}
	if err == nil && t.WaitBackground && !w.wasInterrupted() {
		done, err = waitBackground(w.turnCtx, backgroundWait{sess: sess, sub: sub, session: session, each: each.event,
			interrupted: w.interrupted, limit: t.BackgroundWait, log: logger}, done)
	}
	// The clean stop can hang on a tool or server that ignores it, so it
	// runs aside and a second signal leaves it behind, to end with the
	// process.
	var stopErr error
	if !w.isForced() {
		cleaned := make(chan struct{})
		go func() {
			defer close(cleaned)
			stopErr = live.Stop(10 * time.Second)
		}()
		select {
		case <-cleaned:
		case <-w.forced:
		}
	}
	w.end()
	if w.isForced() {
		logger.Warn(t.What + " abandoned after a second interrupt")
		return cmdutil.ErrInterrupted
	}
	if w.wasInterrupted() {
		// Whatever a tool that ignored the cancellation left running is
		// killed rather than orphaned.
		if err := proc.KillAll(cmdutil.ForceKillTimeout); err != nil {
			logger.Warn("interrupt", "err", err)
		}
	}
	if err != nil {
		return fmt.Errorf("wait for turn: %w", err)
	}
	if stopErr != nil {
		logger.Warn("shutdown", "err", stopErr)
	}
	return t.outcome(f, each, done, w, logger)
}

// turnOutput renders a headless turn's events.
type turnOutput struct {
	*renderer
	// event is what each event goes through: the renderer, or in
	// answer-only text output the renderer minus the streamed text.
	event func(event.Event)
}

// renderer is the output of t's events in its format.
func (t Turn) renderer(f *cmdutil.Factory) turnOutput {
	out := newRenderer(t.Format, f.Stdout, f.Stderr)
	each := turnOutput{renderer: out, event: out.event}
	if t.AnswerOnly && t.Format == "text" {
		each.event = func(ev event.Event) {
			if _, ok := ev.(*event.TextDelta); !ok {
				out.event(ev)
			}
		}
	}
	return each
}

// outcome finishes the output of a turn that ended (done, nil when a
// command stream sent no prompt) and maps it to the command's error.
func (t Turn) outcome(f *cmdutil.Factory, out turnOutput, done *event.TurnDone, w *interruptWatch, logger *slog.Logger) error {
	if done == nil {
		logger.Info(t.What + " finished without a turn")
		if w.wasInterrupted() {
			return cmdutil.ErrInterrupted
		}
		return nil
	}
	if t.AnswerOnly && t.Format == "text" && (done.Status == event.StatusOK || done.Status == actors.StatusIncomplete) && done.Text != "" {
		fmt.Fprint(f.Stdout, done.Text)
		if !strings.HasSuffix(done.Text, "\n") {
			fmt.Fprintln(f.Stdout)
		}
	}
	if err := out.finish(done, t.Built.Spec.Transcript); err != nil {
		return err
	}
	logger.Info(t.What+" finished", "status", done.Status, "steps", done.Steps)
	if w.wasInterrupted() {
		return cmdutil.ErrInterrupted
	}
	switch done.Status {
	case event.StatusCancelled:
		return cmdutil.ErrInterrupted
	case event.StatusOK:
		return nil
	default:
		return cmdutil.ErrSilent
	}
}

// interruptWatch turns the stop signals of a headless run into its
// cancellation: the first cancels the turn (interrupted closes), a second
// kills every process group this process started and abandons the wait
// (forced closes, turnCtx ends).
type interruptWatch struct {
	turnCtx     context.Context
	abandon     context.CancelFunc
	unnotify    func()
	stop        chan struct{}
	interrupted chan struct{}
	forced      chan struct{}
	watcher     chan struct{}
}

// watchInterrupts starts watching; cancel cancels the running turn. Call
// end once the run no longer waits, before reading interrupted or forced,
// and unnotify when the command returns.
func watchInterrupts(logger *slog.Logger, cancel func()) *interruptWatch {
	sigs, unnotify := cmdutil.NotifyStop()
	w := &interruptWatch{unnotify: unnotify, stop: make(chan struct{}), interrupted: make(chan struct{}),
		forced: make(chan struct{}), watcher: make(chan struct{})}
	w.turnCtx, w.abandon = context.WithCancel(context.Background())
	go func() {
		defer close(w.watcher)
		select {
		case <-sigs:
			close(w.interrupted)
			logger.Info("interrupt: cancelling the turn")
			cancel()
		case <-w.stop:
			return
		}
		select {
		case <-sigs:
			// A second signal means the user does not want to wait for a
			// clean stop; what we started must not outlive us all the same.
			logger.Warn("second interrupt: killing child processes and exiting")
			if err := proc.KillAll(cmdutil.ForceKillTimeout); err != nil {
				logger.Warn("second interrupt", "err", err)
			}
			close(w.forced)
			w.abandon()
		case <-w.stop:
		}
	}()
	return w
}

// end stops the watcher and waits for it.
func (w *interruptWatch) end() {
	close(w.stop)
	<-w.watcher
	w.abandon()
}

// isForced reports whether a second signal came.
func (w *interruptWatch) isForced() bool { return closed(w.forced) }

// wasInterrupted reports whether a signal came.
func (w *interruptWatch) wasInterrupted() bool { return closed(w.interrupted) }

// closed reports whether ch is closed, without waiting.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
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
