package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/trust"
)

// askTrust asks the person at the terminal, once for each state of the
// workspace's trust-bearing files, whether to trust a workspace whose
// files would change what Reasonix may do there; the chat and serve call
// it before they open the workspace. Nothing is asked when the workspace
// is trusted, when its files set nothing that was left out, when the user
// already declined these very files, or when stdin is not a terminal
// (nobody is there to answer: the notice stands). The answer is recorded
// either way: yes trusts the files as they are now, anything else declines
// them, so the question comes back only once they change. It reports
// whether the workspace was trusted just now, so the caller loads the
// configuration again.
func askTrust(f *cmdutil.Factory, cfg *config.Config, cwd string) (bool, error) {
	notices := cmdutil.UntrustedNotices(cfg, cwd)
	if cfg.ProjectTrusted || len(notices) == 0 || !stdinTerminal(f) {
		return false, nil
	}
	store, err := trust.Open(cfg.Home)
	if err != nil {
		return false, &cmdutil.UsageError{Err: err}
	}
	if state, err := store.Check(cwd); err != nil || state == trust.Declined {
		return false, nil // an undigestable workspace stays untrusted, as loadConfig said
	}
	w := f.Stdout
	fmt.Fprintf(w, "This workspace's own files would change what Reasonix may do in %s:\n", cwd)
	for _, n := range notices {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w, "They are ignored until you trust the workspace; read them first if you did not write them.")
	fmt.Fprint(w, "Trust this workspace? [y/N] ")
	answer, err := readLine(f.Stdin)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		if err := store.Trust(cwd); err != nil {
			return false, fmt.Errorf("trust %s: %w", cwd, err)
		}
		fmt.Fprintln(w, `Trusted. "reasonix trust --revoke" takes it back.`)
		return true, nil
	default:
		if err := store.Decline(cwd); err != nil {
			return false, fmt.Errorf("record the answer for %s: %w", cwd, err)
		}
		fmt.Fprintln(w, `Not trusted; the files stay ignored. "reasonix trust" trusts the workspace later.`)
		return false, nil
	}
}

// readLine reads one line byte by byte, so nothing after it is taken from
// a terminal that the chat reads next.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := r.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(c[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// stdinTerminal reports whether stdin is a terminal a person can answer on.
func stdinTerminal(f *cmdutil.Factory) bool {
	in, ok := f.Stdin.(*os.File)
	return ok && term.IsTerminal(in.Fd())
}
