package actors

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/goal"
)

// Do applies one command to the session. The session answers by events,
// not by Do's result: a prompt's turn ends with turn_done (or
// prompt_rejected), an approval with approval_resolved. Do fails only for
// a command that is not valid in itself; an id that names nothing pending
// is ignored by the session, as a late answer to a request that has just
// timed out must be.
func (s *Session) Do(cmd event.Command) error {
	if event.IsNilCommand(cmd) {
		return errors.New("command: nil command")
	}
	if err := cmd.Validate(); err != nil {
		return err
	}
	switch c := cmd.(type) {
	case *event.PromptCmd:
		s.Submit(c.Text, !c.Queue)
	case *event.CancelCmd:
		s.Cancel()
	case *event.CancelTaskCmd:
		s.CancelTask(c.ID)
	case *event.ApproveCmd:
		s.Approve(&agent.ApprovalResponse{RequestID: c.ID, Choice: c.Decision, Rule: c.Rule})
	case *event.ElicitationCmd:
		server, _ := event.ElicitationServer(c.ID)
		s.AnswerElicitation(&mcpconn.ElicitationResponse{RequestID: c.ID, Server: server, Action: c.Action, Content: c.Content})
	case *event.SetPostureCmd:
		if err := s.SetPosture(c.Posture); err != nil {
			return fmt.Errorf("set_posture command: %w", err)
		}
	case *event.SetEffortCmd:
		if err := s.SetEffort(c.Effort); err != nil {
			return fmt.Errorf("set_effort command: %w", err)
		}
	case *event.CompactCmd:
		s.Compact()
	case *event.GoalCmd:
		prompt := "/goal "
		if c.Strategy != "" {
			prompt += "--" + c.Strategy + " "
		}
		s.sys.Send(s.pid, &agent.RunTurn{Input: prompt + c.Objective,
			Goal: &goal.Prompt{Action: "start", Objective: strings.TrimSpace(c.Objective), Strategy: c.Strategy}})
	case *event.SendMessageCmd:
		// The one command answered here: whether the agent exists and
		// takes messages is known at once, and a frontend must hear it.
		if _, err := s.SendMessage(c.To, c.Text, sendMessageTimeout); err != nil {
			return err
		}
	case *event.GoalClearCmd:
		// The running goal is one long turn: it is cancelled first, so the
		// clear that is queued behind it runs at once.
		s.Cancel()
		s.sys.Send(s.pid, &agent.RunTurn{Input: "/goal clear", Goal: &goal.Prompt{Action: "clear"}})
	default:
		return fmt.Errorf("command: unsupported %T", cmd)
	}
	return nil
}

// sendMessageTimeout bounds Do's wait for a send_message's answer.
const sendMessageTimeout = 5 * time.Second

// Watch starts a viewer of this session's events on bus, the bus its
// spec published to; Close it when the frontend goes.
func (s *Session) Watch(bus *event.Bus) *event.Viewer {
	return event.NewViewer(bus, s.id)
}
