package workerpb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"reasonix/core/testenv"
)

// protocLine is the header line naming the protoc that generated the
// file. Another protoc release makes the same code for this proto3 file
// but names itself there, so the comparison leaves that line out.
var protocLine = regexp.MustCompile(`(?m)^// \tprotoc +\S+\n`)

// TestGeneratedIsCurrent regenerates worker.pb.go the way `make proto`
// does, with the protoc-gen-go of the protobuf version go.mod pins, and
// fails when the committed file differs: worker.proto was edited without
// regenerating, or the generated file was edited by hand.
func TestGeneratedIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		testenv.Missing(t, "protoc is not on PATH: install the protobuf-compiler package (apt install protobuf-compiler) to run this test")
	}
	goCmd := testenv.Need(t, "go")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	plugin := filepath.Join(dir, "protoc-gen-go")
	run(t, exec.CommandContext(ctx, goCmd, "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go"))
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// From the module root, as make proto runs it: the path is part of
	// the generated file (and the name protobuf registers it under).
	protoc := exec.CommandContext(ctx, "protoc", "--plugin=protoc-gen-go="+plugin, "--proto_path=.",
		"--go_out="+out, "--go_opt=paths=source_relative", "actors/workerpb/worker.proto")
	protoc.Dir = filepath.Join("..", "..")
	run(t, protoc)
	want, err := os.ReadFile(filepath.Join(out, "actors", "workerpb", "worker.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("worker.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	got, want = protocLine.ReplaceAll(got, nil), protocLine.ReplaceAll(want, nil)
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			t.Fatalf("worker.pb.go is stale (run make proto and commit it): first difference at line %d (header line left out):\ncommitted   %q\nregenerated %q", i+1, g, w)
		}
	}
}

func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}
