package actors

import (
	"testing"

	"reasonix/core/goal"
)

// TestTurnOfReadsCommandsAtTheDoor: typed /compact and /goal become the
// typed fields of the turn once, in Session.Run, so no actor behind it
// reads the text; anything else stays an ordinary turn.
func TestTurnOfReadsCommandsAtTheDoor(t *testing.T) {
	t.Parallel()
	if tr := turnOf(" /compact ", false); !tr.Compact || tr.Goal != nil {
		t.Errorf("/compact: %+v", tr)
	}
	tr := turnOf("/goal --research find the leak", true)
	if tr.Goal == nil || *tr.Goal != (goal.Prompt{Action: "start", Objective: "find the leak", Strategy: goal.StrategyResearch}) || !tr.Reject {
		t.Errorf("/goal --research: %+v", tr)
	}
	if tr := turnOf("/goal clear", false); tr.Goal == nil || tr.Goal.Action != "clear" {
		t.Errorf("/goal clear: %+v", tr)
	}
	if tr := turnOf("/goal", false); tr.Goal != nil || tr.GoalError == "" {
		t.Errorf("/goal without an objective: %+v", tr)
	}
	if tr := turnOf("/goalkeeper and /compact later", false); tr.Goal != nil || tr.Compact || tr.GoalError != "" {
		t.Errorf("ordinary prompt: %+v", tr)
	}
}
