package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"reasonix/core/config"
)

// doctorWorkerTimeout bounds each worker's answer in doctor, as
// `reasonix workers` does by default.
const doctorWorkerTimeout = workersTimeout

// checkWorkers reports where the worker token comes from and asks each
// [[workers]] entry for its state, as `reasonix workers` does: one line for
// the setup, then one per worker. Capacity ranges and write paths are the
// config check's: Load refuses a config that gets them wrong.
//
// A worker that is down or draining is a warning, since a session runs
// its tasks elsewhere and uses the worker again once it answers; a
// mistake only the user can fix (token, TLS, protocol, workspace) fails.
func (d *doctor) checkWorkers(ctx context.Context) []check {
	c := check{name: "workers"}
	if d.cfg == nil {
		return []check{c.skipped("needs a valid config")}
	}
	workers := d.cfg.Workers
	if len(workers) == 0 {
		return []check{c.skipped("none configured (add [[workers]] to " + config.UserConfigPath(d.home) + "; see reasonix workers --help)")}
	}
	tok := lookupWorkerToken(d.f, d.cfg)
	c.detail = plural(len(workers), "worker") + " configured"
	switch {
	case tok.err != nil:
		c.status = checkFail
		c.detail += "; " + tok.err.Error()
	case tok.file != "":
		c.detail += "; token from " + tok.file
		if st, err := os.Stat(tok.file); err == nil && d.goos() != "windows" {
			c.detail += fmt.Sprintf(" (mode %04o)", st.Mode().Perm())
		}
	default:
		c.detail += "; token " + config.WorkerTokenEnv + " from the environment"
		if f := d.cfg.Remote.TokenFile; f != "" {
			c.notes = append(c.notes, fmt.Sprintf("token_file %s is not read: %s wins", f, config.WorkerTokenEnv))
		}
	}
	if note := loopbackNote(d.cfg); note != "" {
		if c.status < checkWarn {
			c.status = checkWarn
		}
		c.notes = append(c.notes, note)
	}
	checks := []check{c}

	var rows []workerJSON
	skip := ""
	switch {
	case tok.err != nil:
		skip = "needs a worker token"
	case d.opts.Offline:
		skip = "--offline"
	default:
		var err error
		rows, err = queryWorkers(ctx, d.cfg, d.cwd, tok, doctorWorkerTimeout)
		if err != nil {
			return append(checks, check{status: checkFail, name: "worker", detail: "cannot ask the workers: " + err.Error()})
		}
	}
	for i, w := range workers {
		wc := check{name: "worker"}
		if skip != "" {
			checks = append(checks, wc.skipped(fmt.Sprintf("%s at %s: %s", w.Name, w.Address, skip)))
			continue
		}
		r := rows[i]
		wc.status = workerCheckStatus(r.State)
		wc.detail = workerVerdict(r)
		checks = append(checks, wc)
	}
	return checks
}

// workerCheckStatus grades a worker state for doctor.
func workerCheckStatus(state string) checkStatus {
	switch state {
	case workerStateUp:
		return checkOK
	case workerStateUnreachable, workerStateNoAnswer, workerStateDraining:
		return checkWarn
	}
	return checkFail
}

// workerVerdict is a worker's doctor line: its state and load, or why it
// is not up.
func workerVerdict(r workerJSON) string {
	head := fmt.Sprintf("%s at %s: %s", r.Name, r.Address, r.State)
	if r.State != workerStateUp {
		return head + "; " + r.Error
	}
	return fmt.Sprintf("%s, %d of %d slots busy, serves %s, round trip %s",
		head, r.Running, r.Capacity, servedList(r.Workspaces), formatRTT(r.RTTMS))
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
	return isLoopback(host)
}
