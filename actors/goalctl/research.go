package goalctl

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/core/atomicfile"
	"reasonix/core/goal"
	"reasonix/core/text"
)

// ResearchNotes is an AutoResearch goal's directory of notes, written by
// the host from what the goal does: a person can read where the run
// stands at any moment, and none of it reaches the system prompt, tool
// schemas or memory. The goal block only names the directory. A nil
// *ResearchNotes writes nothing (the light strategy).
type ResearchNotes struct {
	dir  string
	log  *slog.Logger
	seen map[string]bool
}

// The files of an AutoResearch directory.
const (
	researchTask       = "task.md"
	researchPlan       = "plan.md"
	researchProgress   = "progress.md"
	researchFindings   = "findings.md"
	researchDirections = "directions.md"
	researchIterations = "iterations.md"
	researchHeartbeat  = "heartbeat"
)

// OpenResearch opens (or, for a new goal, creates) the goal's directory
// under workspace/.reasonix/autoresearch and records it in rec.
func OpenResearch(workspace string, rec *goal.Record, log *slog.Logger) *ResearchNotes {
	if rec.Research == "" {
		name := rec.StartedAt.UTC().Format("20060102-150405") + "-" + slug(rec.Objective)
		rec.Research = filepath.Join(workspace, ".reasonix", "autoresearch", name)
	}
	if err := os.MkdirAll(rec.Research, 0o755); err != nil {
		log.Error("autoresearch dir", "err", err)
		return nil
	}
	return &ResearchNotes{dir: rec.Research, log: log, seen: map[string]bool{}}
}

// slug is a short file-name form of the objective.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 40 {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "goal"
	}
	return b.String()
}

// Started records the goal's start, or its resumption, and creates the
// notes of a new goal.
func (n *ResearchNotes) Started(rec *goal.Record, resumed bool) {
	if n == nil {
		return
	}
	if !resumed {
		n.write(researchTask, fmt.Sprintf("# Task\n\nGoal %s, started %s.\n\n%s\n", rec.ID, rec.StartedAt.UTC().Format(time.RFC3339), strings.TrimSpace(rec.Objective)))
		n.write(researchPlan, "# Plan\n\nNo todo list yet.\n")
		for _, f := range []string{researchProgress, researchFindings, researchDirections, researchIterations} {
			title := strings.ToUpper(f[:1]) + strings.TrimSuffix(f[1:], ".md")
			n.write(f, "# "+title+"\n\n")
		}
	}
	what := "started"
	if resumed {
		what = "resumed"
	}
	n.append(researchProgress, fmt.Sprintf("- %s goal %s at turn %d\n", time.Now().UTC().Format(time.RFC3339), what, rec.Turns))
	n.heartbeat(rec)
}

// Tool records a successful call as a direction tried, once per exact
// call.
func (n *ResearchNotes) Tool(m *event.ToolFinished, key string) {
	if n == nil || m.IsError || key == "" || m.Tool == goal.ToolGoal || m.Tool == goal.ToolTodo || n.seen[key] {
		return
	}
	n.seen[key] = true
	tool, args, _ := strings.Cut(key, "\x00")
	n.append(researchDirections, fmt.Sprintf("- %s %s\n", tool, text.OneLine(args, 160)))
}

// Round records one goal turn's end: its status, the tokens so far, the
// lease's verdict, the summary as a finding and the todo list as the plan.
func (n *ResearchNotes) Round(rec *goal.Record, status string, v goal.Verdict) {
	if n == nil {
		return
	}
	lease := map[goal.Verdict]string{goal.Renewed: "progress", goal.Idle: "no progress", goal.Nudge: "no progress, reassess", goal.Pause: "no progress, paused"}[v]
	n.append(researchIterations, fmt.Sprintf("- turn %d: %s; %d tokens so far; %s\n", rec.Turns, status, rec.Tokens, lease))
	if rec.Summary != "" {
		n.append(researchFindings, fmt.Sprintf("- turn %d: %s\n", rec.Turns, text.OneLine(rec.Summary, 500)))
	}
	n.write(researchPlan, "# Plan\n\n"+RenderTodo(rec.Todo))
	n.heartbeat(rec)
}

// Ended records that the goal ended.
func (n *ResearchNotes) Ended(rec *goal.Record) {
	if n == nil {
		return
	}
	line := fmt.Sprintf("- %s goal %s after %d turns", time.Now().UTC().Format(time.RFC3339), rec.Status, rec.Turns)
	if rec.Reason != "" {
		line += ": " + text.OneLine(rec.Reason, 300)
	}
	n.append(researchProgress, line+"\n")
	n.heartbeat(rec)
}

func (n *ResearchNotes) heartbeat(rec *goal.Record) {
	n.write(researchHeartbeat, fmt.Sprintf("%s %s turn %d\n", time.Now().UTC().Format(time.RFC3339), rec.Status, rec.Turns))
}

// write replaces a whole file atomically, so a reader never sees half of
// it.
func (n *ResearchNotes) write(name, body string) {
	if err := atomicfile.Write(filepath.Join(n.dir, name), []byte(body), 0o644); err != nil {
		n.log.Warn("autoresearch note", "file", name, "err", err)
	}
}

// append adds whole lines to a log file.
func (n *ResearchNotes) append(name, line string) {
	f, err := os.OpenFile(filepath.Join(n.dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		n.log.Warn("autoresearch note", "file", name, "err", err)
	}
}
