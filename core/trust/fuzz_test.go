package trust

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the store parser: it must return a
// document or an error, never panic, and a document it accepts must hold
// only decisions Check can act on and survive a save and a reload intact.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"workspaces":{}}`))
	f.Add([]byte(`{"version":1,"workspaces":{"/w":{"decision":"trusted","digest":"sha256:00","at":"2026-01-02T03:04:05Z"}}}`))
	f.Add([]byte(`{"version":1,"workspaces":{"/w":{"decision":"declined","digest":"sha256:ab"},"/x/../y":{"decision":"trusted","digest":"sha256:1"}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"workspaces":{"rel":{"decision":"trusted","digest":"md5:1"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := decode(data)
		if err != nil {
			return
		}
		if doc.Version != currentVersion || doc.Workspaces == nil {
			t.Fatalf("accepted document %+v", doc)
		}
		for ws, r := range doc.Workspaces {
			if r.Decision != decisionTrusted && r.Decision != decisionDeclined {
				t.Fatalf("accepted decision %q for %q", r.Decision, ws)
			}
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("encode an accepted document: %v", err)
		}
		again, err := decode(out)
		if err != nil {
			t.Fatalf("a saved document does not load again: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(doc, again) {
			t.Fatalf("round trip changed the document:\n%+v\n%+v", doc, again)
		}
	})
}
