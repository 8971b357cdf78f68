package doctor

import (
	"context"
	"fmt"
	"net"
	"os"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/workercmd"
	"reasonix/core/config"
)

// doctorWorkerTimeout bounds each worker's answer in doctor, as
// `reasonix workers` does by default.
const doctorWorkerTimeout = workercmd.WorkersTimeout

// checkWorkers reports where the worker token comes from and asks each
// [[workers]] entry for its state, as `reasonix workers` does: one line for
// the setup, then one per worker. Capacity ranges and write paths are the
// config check's: Load refuses a config that gets them wrong.
//
// A worker that is down or draining is a warning, since a session runs
// its tasks elsewhere and uses the worker again once it answers; a
// mistake only the user can fix (token, TLS, protocol, workspace) fails.
func (d *Doctor) checkWorkers(ctx context.Context) []check {
	c := check{name: "workers"}
	if d.Cfg == nil {
		return []check{c.skipped("needs a valid config")}
	}
	workers := d.Cfg.Workers
	if len(workers) == 0 {
		return []check{c.skipped("none configured (add [[workers]] to " + config.UserConfigPath(d.home) + "; see reasonix workers --help)")}
	}
	tok := workercmd.LookupWorkerToken(d.f, d.Cfg)
	c.Detail = plural(len(workers), "worker") + " configured"
	switch {
	case tok.Err != nil:
		c.Status = checkFail
		c.Detail += "; " + tok.Err.Error()
	case tok.File != "":
		c.Detail += "; token from " + tok.File
		if st, err := os.Stat(tok.File); err == nil && d.goos() != "windows" {
			c.Detail += fmt.Sprintf(" (mode %04o)", st.Mode().Perm())
		}
	default:
		c.Detail += "; token " + config.WorkerTokenEnv + " from the environment"
		if f := d.Cfg.Remote.TokenFile; f != "" {
			c.Notes = append(c.Notes, fmt.Sprintf("token_file %s is not read: %s wins", f, config.WorkerTokenEnv))
		}
	}
	if note := loopbackNote(d.Cfg); note != "" {
		if c.Status < CheckWarn {
			c.Status = CheckWarn
		}
		c.Notes = append(c.Notes, note)
	}
	checks := []check{c}

	var rows []workercmd.WorkerJSON
	skip := ""
	switch {
	case tok.Err != nil:
		skip = "needs a worker token"
	case d.Opts.Offline:
		skip = "--offline"
	default:
		var err error
		rows, err = workercmd.QueryWorkers(ctx, d.Cfg, d.cwd, tok, doctorWorkerTimeout)
		if err != nil {
			return append(checks, check{Status: checkFail, name: "worker", Detail: "cannot ask the workers: " + err.Error()})
		}
	}
	for i, w := range workers {
		wc := check{name: "worker"}
		if skip != "" {
			checks = append(checks, wc.skipped(fmt.Sprintf("%s at %s: %s", w.Name, w.Address, skip)))
			continue
		}
		r := rows[i]
		wc.Status = workerCheckStatus(r.State)
		wc.Detail = workerVerdict(r)
		checks = append(checks, wc)
	}
	return checks
}

// workerCheckStatus grades a worker state for doctor.
func workerCheckStatus(state string) CheckStatus {
	switch state {
	case workercmd.WorkerStateUp:
		return CheckOK
	case workercmd.WorkerStateUnreachable, workercmd.WorkerStateNoAnswer, workercmd.WorkerStateDraining:
		return CheckWarn
	}
	return checkFail
}

// workerVerdict is a worker's doctor line: its state and load, or why it
// is not up.
func workerVerdict(r workercmd.WorkerJSON) string {
	head := fmt.Sprintf("%s at %s: %s", r.Name, r.Address, r.State)
	if r.State != workercmd.WorkerStateUp {
		return head + "; " + r.Error
	}
	return fmt.Sprintf("%s, %d of %d slots busy, serves %s, round trip %s",
		head, r.Running, r.Capacity, workercmd.ServedList(r.Workspaces), workercmd.FormatRTT(r.RTTMS))
}

// loopbackNote warns when the address workers answer to (advertise, else
// listen) is loopback while a worker lives on another host: the worker's
// answers travel on a connection it opens to that address, so it could
// never answer.
func loopbackNote(cfg *config.Config) string {
	key, addr := "listen", cfg.Remote.Listen
	if cfg.Remote.Advertise != "" {
		key, addr = "advertise", cfg.Remote.Advertise
	}
	if !loopbackAddr(addr) {
		return ""
	}
	for _, w := range cfg.Workers {
		if !loopbackAddr(w.Address) {
			return fmt.Sprintf("[remote] %s %s is loopback, so %s (and any worker on another host) cannot answer; set listen and advertise to an address it can reach",
				key, addr, w.Name)
		}
	}
	return ""
}

// loopbackAddr reports whether a host:port names this host's loopback.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return cmdutil.IsLoopback(host)
}
