package serve

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"reasonix/core/command"
	"reasonix/core/mcp"
	"reasonix/core/ref"
)

// The page's / and @ menus offer what the chat's offer: the built-in and
// custom commands and the open session's MCP prompts, and the entries of
// one workspace directory, with the chat's rules (ref.Complete).

// commandJSON is one entry of the / menu.
type commandJSON struct {
	Name        string `json:"name"`
	Args        string `json:"args,omitempty"`
	Description string `json:"description"`
	// Kind is builtin, custom or mcp.
	Kind string `json:"kind"`
}

// mcpMenuTimeout bounds the session's answer about its MCP servers; the
// menu is drawn without the prompts rather than late.
const mcpMenuTimeout = 2 * time.Second

// handleCommands is GET /api/commands[?session=ID]: {"commands": [...],
// "problems": [...]}, the built-ins first, then the user's and the
// workspace's commands, read again at each request (a command file edited
// meanwhile is what the user expects to see), then the prompts of the
// named open session's ready MCP servers.
func (s *Server) handleCommands(w http.ResponseWriter, r *http.Request) {
	out := []commandJSON{}
	for _, b := range command.Builtins {
		out = append(out, commandJSON{Name: b.Name, Args: b.Args, Description: b.Description, Kind: "builtin"})
	}
	custom, problems := command.Load(command.Dirs(s.opts.Home, s.opts.Cwd)...)
	for _, c := range custom {
		out = append(out, commandJSON{Name: c.Name, Args: c.ArgumentHint, Description: c.Description, Kind: "custom"})
	}
	msgs := []string{}
	for _, p := range problems {
		msgs = append(msgs, p.String())
	}
	if id := r.URL.Query().Get("session"); id != "" {
		if e := s.live(r.Context(), id); e != nil {
			st, err := e.live.Session().MCPStatus(mcpMenuTimeout)
			if err != nil {
				msgs = append(msgs, "mcp prompts: "+err.Error())
			} else {
				for _, p := range st.MCPPrompts() {
					out = append(out, commandJSON{Name: p.Command(), Args: promptArgs(p.Prompt), Description: p.Prompt.Description, Kind: "mcp"})
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Commands []commandJSON `json:"commands"`
		Problems []string      `json:"problems"`
	}{out, msgs})
}

// promptArgs is an MCP prompt's usage: <name> for a required argument,
// [name] for an optional one, in declared order.
func promptArgs(p mcp.Prompt) string {
	var words []string
	for _, a := range p.Arguments {
		if a.Required {
			words = append(words, "<"+a.Name+">")
		} else {
			words = append(words, "["+a.Name+"]")
		}
	}
	return strings.Join(words, " ")
}

// handleComplete is GET /api/complete?partial=P: {"entries": [{"name","dir"}]},
// what completes @P in the served workspace.
//
// Unlike the chat's, it lists only what is inside the workspace: the page
// may be on another machine, and a listing of the host's other directories
// is not what serving a workspace offers.
func (s *Server) handleComplete(w http.ResponseWriter, r *http.Request) {
	partial := r.URL.Query().Get("partial")
	if filepath.IsAbs(partial) || strings.HasPrefix(partial, "~") || strings.HasPrefix(partial, "/") {
		writeError(w, http.StatusBadRequest, "complete "+strconv.Quote(partial)+": outside the workspace")
		return
	}
	entries, err := ref.Complete(s.opts.Cwd, partial, ref.DefaultCompleteLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	type entryJSON struct {
		Name string `json:"name"`
		Dir  bool   `json:"dir"`
	}
	out := make([]entryJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, entryJSON{Name: e.Name, Dir: e.Dir})
	}
	writeJSON(w, http.StatusOK, struct {
		Entries []entryJSON `json:"entries"`
	}{out})
}
