package serve

import (
	"net/http"
	"strings"

	"reasonix/core/session"
)

// The page's ↑ recalls the prompts typed in the served workspace, from the
// same history the chat keeps (session.PromptsPath): a prompt typed in the
// chat is recalled on the page and the other way round.

// promptsPath is the workspace's prompt history; "" when the server has no
// home to keep it in.
func (s *Server) promptsPath() string {
	if s.opts.Home == "" || s.opts.Cwd == "" {
		return ""
	}
	return session.PromptsPath(s.opts.Home, s.opts.Cwd)
}

// handlePrompts is GET /api/prompts: {"prompts": [...]}, oldest first.
func (s *Server) handlePrompts(w http.ResponseWriter, r *http.Request) {
	items := []string{}
	if path := s.promptsPath(); path != "" {
		loaded, err := session.LoadPrompts(path)
		if err != nil {
			s.log.Warn("prompt history", "err", err)
		}
		items = append(items, loaded...)
	}
	writeJSON(w, http.StatusOK, struct {
		Prompts []string `json:"prompts"`
	}{items})
}

// rememberPrompt adds what the user typed to the workspace's history. A
// failure to write it costs the user the recall, not the prompt.
func (s *Server) rememberPrompt(text string) {
	path := s.promptsPath()
	if path == "" || strings.TrimSpace(text) == "" {
		return
	}
	if err := session.AppendPrompt(path, text); err != nil {
		s.log.Warn("prompt history", "err", err)
	}
}
