package serve

import (
	"io"
	"net/http"

	"reasonix/actors/event"
)

// maxCommandBody bounds one command, a prompt with a large paste
// included; `run` reads command lines up to the same size.
const maxCommandBody = 16 << 20

// handleCommand applies one stream-json command to a session. A prompt is
// expanded first (custom commands, local @path references), off any actor;
// what the expansion has to say comes back on the stream as notices.
func (s *Server) handleCommand(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e := s.live(r.Context(), id)
	if e == nil {
		writeError(w, http.StatusNotFound, "no open session "+id)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCommandBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "command: "+err.Error())
		return
	}
	cmd, err := event.DecodeCommand(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if p, ok := cmd.(*event.PromptCmd); ok {
		e.setTitle(p.Text)
		s.rememberPrompt(p.Text)
		text, notices := s.expandPrompt(r.Context(), e.live.Built().Spec.Cwd, p.Text)
		bus := e.live.Bus()
		for _, n := range notices {
			bus.Publish(&event.Notice{Meta: event.Meta{Session: id}, Level: "warn", Message: n})
		}
		p.Text = text
	}
	if err := e.live.Session().Do(cmd); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
}
