package fleetcmd

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider"
	"reasonix/core/session"
)

// TestResumeDeliversToTheParentOnce: what a resumed fleet owes the parent
// is appended to its transcript once, whatever it had read before the
// crash: a follow-up's result (labelled with its agent, whose first
// result the parent holds) and a journalled message to the parent; a
// second resume adds nothing.
func TestResumeDeliversToTheParentOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := session.Open(dir, session.Header{ID: "p", Created: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	path := st.Path()
	held := []provider.Message{
		{Role: provider.RoleSystem, Content: "sys"},
		{Role: provider.RoleUser, Content: "[Background task f1.1 (a) ok]\nfirst answer"},
		{Role: provider.RoleUser, Content: "[Message from f1.1 (a)]\nseen before"},
	}
	for _, m := range held {
		if err := st.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	followUp := []event.TaskSpec{{ID: "f1.1+1", Of: "f1.1", Name: "a", Prompt: "[Message from your parent agent]\nmore"}}
	res := &fleetmsg.FleetResult{FleetID: "f1.1+1", Results: []event.TaskResult{{TaskID: "f1.1+1", Status: event.TaskOK, Text: "second answer"}}}
	msg := func(text string) json.RawMessage {
		b, _ := json.Marshal(fleetmsg.MessageToParent{ID: "m1", From: "f1.1", Name: "a", Text: text})
		return b
	}
	journalled := []json.RawMessage{msg("seen before"), msg("never seen")}
	f := &cmdutil.Factory{Stderr: io.Discard}
	for round := 0; round < 2; round++ {
		_, msgs, _, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		store, err := session.Reopen(path)
		if err != nil {
			t.Fatal(err)
		}
		p := &fleetParent{id: "p", store: store, msgs: msgs}
		if err := p.deliverBackground(f, followUp, res); err != nil {
			t.Fatal(err)
		}
		if err := p.deliverMessages(f, journalled); err != nil {
			t.Fatal(err)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, msgs, _, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs[len(held):] {
		got = append(got, m.Content)
	}
	want := []string{"[Background task f1.1 (a) ok]\nsecond answer", "[Message from f1.1 (a)]\nnever seen"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("appended %q, want %q", got, want)
	}
}
