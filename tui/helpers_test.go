package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	xgolden "github.com/charmbracelet/x/exp/golden"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/assemble"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
)

// testConfig writes a user config pointing at url into a fresh home and
// loads it for a fresh workspace.
func testConfig(t testing.TB, url string) (cfg *config.Config, home, cwd string) {
	t.Helper()
	home, cwd = t.TempDir(), t.TempDir()
	text := providertest.ConfigText(url, "")
	if err := os.WriteFile(config.UserConfigPath(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: cwd})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, home, cwd
}

// liveOpener opens real interactive sessions over the model fake, as the
// chat command does from config.
// It opens a new session whatever the request: resuming is the opener's
// business (cmd/reasonix), and what the chat asks is in *reqs.
func liveOpener(t testing.TB, srv *providertest.Server) (Options, *[]*actors.Live) {
	o, opened, _ := liveOpenerReqs(t, srv)
	return o, opened
}

func liveOpenerReqs(t testing.TB, srv *providertest.Server) (Options, *[]*actors.Live, *[]OpenRequest) {
	t.Helper()
	cfg, home, cwd := testConfig(t, srv.URL())
	var opened []*actors.Live
	var reqs []OpenRequest
	o := Options{
		Cwd: cwd, Home: home,
		Open: func(ctx context.Context, req OpenRequest) (*actors.Live, []string, error) {
			reqs = append(reqs, req)
			b, err := assemble.Build(cfg, assemble.BuildOptions{Cwd: cwd, Model: req.Model, PermissionMode: req.PermissionMode, Interactive: true, MaxSteps: 8})
			if err != nil {
				return nil, nil, err
			}
			live, err := actors.StartLive(b, nil)
			if err == nil {
				opened = append(opened, live)
			}
			return live, nil, err
		},
	}
	t.Cleanup(func() {
		for _, l := range opened {
			_ = l.Close(5 * time.Second)
		}
	})
	return o, &opened, &reqs
}

// testModel is a model at a fixed size and clock with no session: tests
// feed it events as a session would.
func testModel(t testing.TB, width, height int) *model {
	t.Helper()
	m := newModel(Options{Cwd: t.TempDir()}, &shared{})
	m.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	m.opening = false
	m.status.model = "fake/fake-model"
	return m
}

// feed hands m events as its subscription would.
func feed(m *model, evs ...event.Event) {
	m.Update(eventsMsg{gen: m.gen, events: evs})
}

// frame is what the terminal shows: the printed blocks, then the live
// region, without colours.
func frame(m *model) string {
	var b strings.Builder
	for _, h := range m.chat.history {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteString(m.View().Content)
	lines := strings.Split(ansi.Strip(b.String()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares got with testdata/<test name>.golden; -update (the
// golden package's flag) rewrites it.
func golden(t *testing.T, got string) {
	t.Helper()
	xgolden.RequireEqual(t, got)
}

func press(m *model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		_, last = m.Update(keyMsg(k))
	}
	return last
}

// keyMsg is the key press Bubble Tea decodes for the key named k.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "ctrl+f":
		return tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// typeText types s into m key by key.
func typeText(m *model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func meta(seq int64) event.Meta {
	return event.Meta{Seq: seq, Session: "s1", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}
