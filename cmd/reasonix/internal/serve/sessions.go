package serve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/core/goal"
	"reasonix/core/prompt"
	"reasonix/core/provider"
	"reasonix/core/ref"
	"reasonix/core/session"
	"reasonix/core/text"
)

// entry is one session the server holds. While it is being opened live is
// nil and ready is open; a failed open removes the entry again.
type entry struct {
	id    string
	ready chan struct{}
	live  *actors.Live
	err   error

	// ctx ends when the session is closed; event streams watch it.
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once

	mu    sync.Mutex
	title string
	// warns are what opening the session reported, for the page to show.
	warns []string
	// liveFrom is how many /messages entries the transcript held when the
	// session went live: those no event on its bus replays. base is their
	// digest, to tell when a compaction has rewritten them since.
	liveFrom int
	base     [32]byte
	// enc is shared by the session's event streams.
	enc *encodeCache
	// tabs counts the session's open event streams; each change is
	// signalled on tabsChanged for the warden (tabs.go).
	tabs        int
	tabsChanged chan struct{}
	// wardenDone is closed when the warden has stopped; nil when the
	// session has none.
	wardenDone chan struct{}
}

func newEntry(id string) *entry {
	ctx, cancel := context.WithCancel(context.Background())
	return &entry{id: id, ready: make(chan struct{}), ctx: ctx, cancel: cancel, enc: newEncodeCache(),
		tabsChanged: make(chan struct{}, 1)}
}

// close closes the session, then ends its event streams, which drain what
// the closing published and say session_closed, and its warden.
func (e *entry) close(timeout time.Duration) error {
	var err error
	e.once.Do(func() {
		<-e.ready
		if e.live != nil {
			err = e.live.Close(timeout)
		}
		e.cancel()
		if e.wardenDone != nil {
			<-e.wardenDone
		}
	})
	return err
}

// setTitle keeps the session's first prompt as its title.
func (e *entry) setTitle(t string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.title == "" {
		e.title = text.OneLine(t, titleRunes)
	}
}

func (e *entry) getTitle() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.title
}

// titleRunes is how much of the first prompt a listing shows.
const titleRunes = 80

// live returns the open session id names, waiting for one being opened;
// nil when the server holds none by that id.
func (s *Server) live(ctx context.Context, id string) *entry {
	s.mu.Lock()
	e := s.lives[id]
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil
	}
	if e.live == nil {
		return nil
	}
	return e
}

// sessionJSON is one entry of GET /api/sessions.
type sessionJSON struct {
	ID      string `json:"id"`
	Cwd     string `json:"cwd"`
	Live    bool   `json:"live"`
	Title   string `json:"title"`
	Model   string `json:"model"`
	Updated string `json:"updated"`
	Running bool   `json:"running"`
}

// caughtUp is the session's view once it has folded every event published
// so far (a listing right after turn_done says the turn is over), or as
// it stands when that takes longer than a moment.
func caughtUp(ctx context.Context, l *actors.Live) event.Snapshot {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if snap, err := l.SnapshotAt(ctx, l.Bus().LastSeq()); err == nil {
		return snap
	}
	return l.Snapshot()
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	saved, err := s.opts.Sessions()
	if err != nil {
		// A damaged transcript must not hide the others.
		s.log.Warn("serve: list sessions", "err", err)
		if len(saved) == 0 {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	type item struct {
		sessionJSON
		at time.Time
	}
	var out []item
	seen := map[string]bool{}
	for _, e := range s.openEntries() {
		seen[e.id] = true
		b := e.live.Built()
		at := e.live.Started()
		if st, err := os.Stat(b.Transcript.Path()); err == nil && st.ModTime().After(at) {
			at = st.ModTime()
		}
		title := e.getTitle()
		if title == "" {
			title = firstPrompt(b.Transcript.Path())
			e.setTitle(title)
		}
		out = append(out, item{sessionJSON{
			ID: e.id, Cwd: b.Spec.Cwd, Live: true, Title: title, Model: modelName(b),
			Updated: at.UTC().Format(time.RFC3339), Running: caughtUp(r.Context(), e.live).Running,
		}, at})
	}
	for _, sum := range saved {
		if seen[sum.ID] {
			continue
		}
		at := sum.Started
		if st, err := os.Stat(sum.Path); err == nil {
			at = st.ModTime()
		}
		title := s.title(sum.Path)
		if title == "" {
			title = sum.LastPrompt
		}
		out = append(out, item{sessionJSON{
			ID: sum.ID, Cwd: s.opts.Cwd, Title: title, Model: sum.Model,
			Updated: at.UTC().Format(time.RFC3339),
		}, at})
	}
	slices.SortStableFunc(out, func(a, b item) int { return b.at.Compare(a.at) })
	list := make([]sessionJSON, len(out))
	for i, it := range out {
		list[i] = it.sessionJSON
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

// openEntries are the sessions open now, in no order.
func (s *Server) openEntries() []*entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*entry
	for _, e := range s.lives {
		select {
		case <-e.ready:
			if e.live != nil {
				out = append(out, e)
			}
		default:
		}
	}
	return out
}

func modelName(b *actors.Built) string {
	return b.Model.Provider.Name + "/" + b.Model.Model
}

// maxOpenBody bounds POST /api/sessions.
const maxOpenBody = 4 << 10

// handleOpen starts a new session or resumes a saved one; a session the
// server already holds is returned as it is.
func (s *Server) handleOpen(w http.ResponseWriter, r *http.Request) {
	var req OpenRequest
	var body struct {
		Resume string `json:"resume"`
		Model  string `json:"model"`
		Plan   *bool  `json:"plan"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxOpenBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "open session: want {} or {\"resume\":\"<id>\",\"model\":\"…\",\"plan\":true}: "+err.Error())
		return
	}
	req.Resume, req.Model = body.Resume, body.Model
	if body.Plan != nil {
		req.Plan = *body.Plan
	}
	if req.Resume != "" {
		if e := s.live(r.Context(), req.Resume); e != nil {
			if body.Plan == nil {
				writeJSON(w, http.StatusOK, map[string]string{"id": e.id})
				return
			}
			e, status, err := s.reopen(r.Context(), e, req)
			if err != nil {
				writeError(w, status, err.Error())
				return
			}
			writeJSON(w, status, map[string]any{"id": e.id, "warnings": nonNil(e.warns)})
			return
		}
		if !s.saved(req.Resume) {
			writeError(w, http.StatusNotFound, "no saved session "+req.Resume+" in this workspace")
			return
		}
	}
	e, status, err := s.open(r.Context(), req)
	if err != nil {
		writeError(w, status, err.Error())
		return
	}
	writeJSON(w, status, map[string]any{"id": e.id, "warnings": nonNil(e.warns)})
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// reopen closes the open session old and resumes it as req asks (in or
// out of plan mode), keeping its posture and title. The new entry takes
// old's place before old is closed, so a request for the session meanwhile
// waits for the reopened one instead of resuming the transcript itself.
// A session with a turn running is not reopened: closing it would cancel
// the turn.
func (s *Server) reopen(ctx context.Context, old *entry, req OpenRequest) (*entry, int, error) {
	// What the page last saw (a posture change, a turn's end) must be
	// what the reopened session keeps.
	snap := caughtUp(ctx, old.live)
	if snap.Running {
		return nil, http.StatusConflict, errors.New("a turn is running: cancel it or let it finish before switching plan mode")
	}
	req.Posture = posture(old.live.Built(), snap)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, http.StatusServiceUnavailable, errors.New("the server is shutting down")
	}
	if s.lives[old.id] != old {
		s.mu.Unlock()
		return nil, http.StatusConflict, errors.New("session " + old.id + " was closed or reopened meanwhile")
	}
	pending := newEntry(old.id)
	pending.setTitle(old.getTitle())
	s.lives[old.id] = pending
	s.mu.Unlock()
	if err := old.close(s.opts.CloseTimeout); err != nil {
		s.log.Warn("serve: close session to reopen it", "session", old.id, "err", err)
	}
	e, status, err := s.start(ctx, req, pending)
	if status == http.StatusCreated {
		status = http.StatusOK
	}
	return e, status, err
}

// saved reports whether id is one of the workspace's saved sessions.
func (s *Server) saved(id string) bool {
	if id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return false
	}
	list, _ := s.opts.Sessions()
	return slices.ContainsFunc(list, func(sum session.Summary) bool { return sum.ID == id })
}

// open starts a session and registers it. A resumed session is registered
// under its id while it opens, so that a second request for it waits for
// the first instead of racing it for the transcript.
func (s *Server) open(ctx context.Context, req OpenRequest) (*entry, int, error) {
	var pending *entry
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, http.StatusServiceUnavailable, errors.New("the server is shutting down")
	}
	s.mu.Unlock()
	if req.Resume != "" {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return nil, http.StatusServiceUnavailable, errors.New("the server is shutting down")
		}
		if e := s.lives[req.Resume]; e != nil {
			s.mu.Unlock()
			if e = s.live(ctx, req.Resume); e == nil {
				return nil, http.StatusConflict, errors.New("session " + req.Resume + " could not be opened")
			}
			return e, http.StatusOK, nil
		}
		pending = newEntry(req.Resume)
		s.lives[req.Resume] = pending
		s.mu.Unlock()
	}
	return s.start(ctx, req, pending)
}

// start opens the session req asks for into pending, the entry already
// registered under its id, or into a new entry when pending is nil.
func (s *Server) start(ctx context.Context, req OpenRequest, pending *entry) (*entry, int, error) {
	live, warns, err := s.opts.Open(ctx, req)
	if err != nil {
		if pending != nil {
			s.mu.Lock()
			delete(s.lives, req.Resume)
			s.mu.Unlock()
			pending.err = err
			close(pending.ready)
			pending.cancel()
		}
		status := http.StatusInternalServerError
		switch {
		case errors.Is(err, ErrInvalid):
			status = http.StatusBadRequest
		case errors.Is(err, session.ErrBusy):
			status = http.StatusConflict
		}
		s.log.Warn("serve: open session", "resume", req.Resume, "err", err)
		return nil, status, err
	}
	for _, w := range warns {
		s.log.Warn("serve: session warning", "session", live.ID(), "warning", w)
	}
	e := pending
	if e == nil {
		e = newEntry(live.ID())
	}
	e.live, e.warns = live, warns
	if req.Resume != "" {
		e.liveFrom, e.base = s.history(ctx, live)
	}
	e.startWarden(s.log)
	close(e.ready)
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.lives[e.id] = e
	}
	s.mu.Unlock()
	if closing {
		// Shutdown has already taken the sessions it closes; this one
		// arrived too late to be among them.
		_ = e.close(s.opts.CloseTimeout)
		return nil, http.StatusServiceUnavailable, errors.New("the server is shutting down")
	}
	if req.Resume != "" {
		e.setTitle(firstPrompt(live.Built().Transcript.Path()))
	}
	return e, http.StatusCreated, nil
}

// history is the digest of the conversation a resumed session starts
// with, once what opening it appended (a repaired turn) is on disk.
func (s *Server) history(ctx context.Context, live *actors.Live) (int, [32]byte) {
	store := live.Built().Transcript
	written := make(chan struct{})
	store.Barrier(func(error) { close(written) })
	select {
	case <-written:
	case <-ctx.Done():
		return -1, [32]byte{}
	}
	_, msgs, _, err := session.Load(store.Path())
	if err != nil {
		return -1, [32]byte{}
	}
	conv := conversation(msgs)
	return len(conv), digest(conv)
}

func digest(conv []messageJSON) [32]byte {
	data, _ := json.Marshal(conv)
	return sha256.Sum256(data)
}

// handleDelete closes a session; its transcript is saved and it stays
// listed as a saved session.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e := s.live(r.Context(), id)
	if e == nil {
		writeError(w, http.StatusNotFound, "no open session "+id)
		return
	}
	s.mu.Lock()
	if s.lives[id] == e {
		delete(s.lives, id)
	}
	s.mu.Unlock()
	if err := e.close(s.opts.CloseTimeout); err != nil {
		s.log.Warn("serve: close session", "session", id, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleSession describes one session: a live one with its snapshot, a
// saved one without.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if e := s.live(r.Context(), id); e != nil {
		b := e.live.Built()
		snap := caughtUp(r.Context(), e.live)
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "cwd": b.Spec.Cwd, "model": modelName(b), "effort": b.Effort,
			"transcript": b.Transcript.Path(), "live": true, "title": e.getTitle(),
			"posture": posture(b, snap), "plan": b.Spec.Agent.PlanMode, "snapshot": snap,
		})
		return
	}
	sum, ok := s.savedSummary(id)
	if !ok {
		writeError(w, http.StatusNotFound, "no session "+id)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "cwd": s.opts.Cwd, "model": sum.Model, "transcript": sum.Path, "live": false,
		"title": s.title(sum.Path),
	})
}

// posture is the session's approval posture now: the last one a
// posture_changed set, else the one it started with.
func posture(b *actors.Built, snap event.Snapshot) string {
	if snap.Posture != "" {
		return snap.Posture
	}
	if p := string(b.Spec.Agent.Permissions.Posture); p != "" {
		return p
	}
	return "ask"
}

func (s *Server) savedSummary(id string) (session.Summary, bool) {
	if id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return session.Summary{}, false
	}
	list, _ := s.opts.Sessions()
	i := slices.IndexFunc(list, func(sum session.Summary) bool { return sum.ID == id })
	if i < 0 {
		return session.Summary{}, false
	}
	return list[i], true
}

// fleetTimeout bounds the scheduler's answer to a status query.
const fleetTimeout = 5 * time.Second

func (s *Server) handleFleet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e := s.live(r.Context(), id)
	if e == nil {
		writeError(w, http.StatusNotFound, "no open session "+id)
		return
	}
	st, err := e.live.Session().FleetStatus(fleetTimeout)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// messageJSON is one entry of GET /api/sessions/{id}/messages. A tool call
// the assistant made is an entry of its own with tool, call_id and args.
type messageJSON struct {
	Role   string `json:"role"`
	Text   string `json:"text"`
	Tool   string `json:"tool,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Args   string `json:"args,omitempty"`
	// Attachments are the @references of a user message, whose blocks
	// are taken off its text (ref.Split).
	Attachments []string `json:"attachments,omitempty"`
}

// handleMessages reads the conversation back from the transcript: what a
// page shows for a session whose earlier events are not on its bus.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var path string
	e := s.live(r.Context(), id)
	if e != nil {
		path = e.live.Built().Transcript.Path()
	} else if sum, ok := s.savedSummary(id); ok {
		path = sum.Path
	} else {
		writeError(w, http.StatusNotFound, "no session "+id)
		return
	}
	_, msgs, _, err := session.Load(path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	conv := conversation(msgs)
	// A saved session has no bus: every message is history.
	liveFrom := len(conv)
	if e != nil {
		liveFrom = e.liveFrom
		if liveFrom > len(conv) || (liveFrom > 0 && digest(conv[:liveFrom]) != e.base) {
			liveFrom = -1 // compacted since: the page cannot split it
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": conv, "live_from": liveFrom})
}

// conversation turns a transcript's messages into the page's entries; the
// system message is left out.
func conversation(msgs []provider.Message) []messageJSON {
	out := []messageJSON{}
	tools := map[string]string{}
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			typed, files := ref.Split(prompt.WithoutPlanNote(m.Content))
			out = append(out, messageJSON{Role: "user", Text: typed, Attachments: files})
		case provider.RoleAssistant:
			if m.Content != "" || len(m.ToolCalls) == 0 {
				out = append(out, messageJSON{Role: "assistant", Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				tools[c.ID] = c.Name
				out = append(out, messageJSON{Role: "assistant", Tool: c.Name, CallID: c.ID, Args: c.Arguments})
			}
		case provider.RoleTool:
			name := m.Name
			if name == "" {
				name = tools[m.ToolCallID]
			}
			out = append(out, messageJSON{Role: "tool", Text: m.Content, Tool: name, CallID: m.ToolCallID})
		}
	}
	return out
}

// title is the first prompt of the transcript at path, read once: it
// never changes after it is written, and the page lists the sessions
// after every turn.
func (s *Server) title(path string) string {
	s.mu.Lock()
	t, ok := s.titles[path]
	s.mu.Unlock()
	if ok {
		return t
	}
	if t = firstPrompt(path); t != "" {
		s.mu.Lock()
		s.titles[path] = t
		s.mu.Unlock()
	}
	return t
}

// firstPromptLines bounds how far into a transcript firstPrompt looks: the
// header, the system message and the first user message come first.
const firstPromptLines = 64

// firstPrompt is the first user message of the transcript at path on one
// line, shortened; empty when there is none yet or the file cannot be
// read.
func firstPrompt(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for range firstPromptLines {
		line, err := br.ReadBytes('\n')
		var rec struct {
			Type    string            `json:"type"`
			Message *provider.Message `json:"message"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "message" && rec.Message != nil && rec.Message.Role == provider.RoleUser {
			content, _ := ref.Split(prompt.WithoutPlanNote(rec.Message.Content))
			if objective, ok := goal.ObjectiveOf(content); ok {
				content = "goal: " + objective
			}
			return text.OneLine(content, titleRunes)
		}
		if err != nil {
			return ""
		}
	}
	return ""
}
