package serve

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestMenus: /api/commands lists the built-ins and a workspace command;
// /api/complete lists what completes a partial path in the workspace and
// refuses one outside it.
func TestMenus(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(h.cwd, ".reasonix", "commands"), 0o755))
	must(os.WriteFile(filepath.Join(h.cwd, ".reasonix", "commands", "review.md"), []byte("---\ndescription: Review the diff\n---\nReview $ARGUMENTS\n"), 0o644))
	must(os.WriteFile(filepath.Join(h.cwd, "notes.txt"), []byte("n\n"), 0o644))
	must(os.Mkdir(filepath.Join(h.cwd, "notes"), 0o755))

	var cmds struct {
		Commands []struct{ Name, Description, Kind string }
	}
	decode(t, h.req("GET", "/api/commands", nil), http.StatusOK, &cmds)
	kinds := map[string]string{}
	for _, c := range cmds.Commands {
		kinds[c.Name] = c.Kind
	}
	if kinds["compact"] != "builtin" || kinds["review"] != "custom" {
		t.Errorf("commands = %+v", cmds.Commands)
	}

	var got struct {
		Entries []struct {
			Name string
			Dir  bool
		}
	}
	decode(t, h.req("GET", "/api/complete?partial=no", nil), http.StatusOK, &got)
	if len(got.Entries) != 2 || got.Entries[0].Name != "notes/" || !got.Entries[0].Dir || got.Entries[1].Name != "notes.txt" {
		t.Errorf("entries = %+v", got.Entries)
	}
	for _, outside := range []string{"/etc/", "~/", "../"} {
		want(t, h.req("GET", "/api/complete?partial="+outside, nil), http.StatusBadRequest)
	}
}
