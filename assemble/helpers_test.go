package assemble

import (
	"testing"

	"reasonix/actors/kernel"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// injectPanic arms kernel.InjectFault for the test's length.
func injectPanic(t *testing.T, kind, msgType string, after bool) *kernel.Fault {
	t.Helper()
	f, clear := kernel.InjectFault(kind, msgType, after)
	t.Cleanup(clear)
	return f
}
