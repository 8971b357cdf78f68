package goal

import (
	"fmt"
	"strings"
)

// ToolGoal and ToolTodo are the names of the tools a goal gives the model.
const (
	ToolGoal = "goal"
	ToolTodo = "todo"
)

// Block is the goal block the controller prepends to every user turn of a
// goal. It depends only on the record's fixed parts (objective, strategy,
// research directory), so it reads the same in every turn and the system
// prompt never changes: requests stay byte-stable between compactions.
func Block(r *Record) string {
	var b strings.Builder
	b.WriteString("[Active goal ")
	b.WriteString(r.ID)
	b.WriteString("]\nObjective:\n")
	b.WriteString(strings.TrimSpace(r.Objective))
	b.WriteString("\n\n")
	if s := Sections(r.Objective); len(s) > 0 {
		fmt.Fprintf(&b, "The objective is a task contract: its %s sections bound the work. Stay inside them.\n", strings.Join(s, ", "))
	} else {
		b.WriteString("Infer a light contract (request, output, constraints) from the conversation and the workspace.\n")
	}
	b.WriteString("Work autonomously across turns. Pause only for irreversible or externally visible operations, a change of scope, or information only the user can give; otherwise choose a sensible default and report it as an assumption.\n")
	fmt.Fprintf(&b, "Keep a %s list (one item in_progress at a time). At the end of every turn call %s once: status \"complete\" only when the request, output format, constraints and verification are met (or reported as unverified), \"blocked\" with the reason when you cannot go on without the user, \"in_progress\" with a summary otherwise.\n", ToolTodo, ToolGoal)
	if r.Strategy == StrategyResearch {
		b.WriteString("Strategy: AutoResearch. Work in iterations: state a direction, try it, measure, record the finding, then pick the next direction; do not repeat a direction already tried.")
		if r.Research != "" {
			fmt.Fprintf(&b, " The host keeps the run's notes in %s; read them when you need to recall what was tried.", r.Research)
		}
		b.WriteString("\n")
	}
	b.WriteString("[End of goal]")
	return b.String()
}

// Continue is the body of a continuation turn.
const Continue = "Continue working toward the goal from where you stopped."

// Resumed is the body of the first turn after a resume.
const Resumed = "The goal was interrupted and is resumed. Continue from the last completed step; do not redo completed steps."

// Reassess is the one-shot nudge after NudgeAfter rounds without progress.
const Reassess = "No progress for several rounds: the last rounds repeated earlier work. Reassess the approach, pick a different direction, or report blocked with the reason."

// Turn is the text of one goal turn: the block, then body.
func Turn(r *Record, body string) string {
	return Block(r) + "\n\n" + body
}

// ObjectiveOf reads the objective back out of a goal turn's text (Turn's
// output), so a listing can name a goal session by what it works on
// rather than by its block. ok is false for text that is not a goal turn.
func ObjectiveOf(turn string) (objective string, ok bool) {
	rest, found := strings.CutPrefix(turn, "[Active goal ")
	if !found {
		return "", false
	}
	_, rest, found = strings.Cut(rest, "]\nObjective:\n")
	if !found {
		return "", false
	}
	// The objective is trimmed when the block is written, so the first
	// blank line after it ends it.
	objective, _, _ = strings.Cut(rest, "\n\n")
	return strings.TrimSpace(objective), true
}
