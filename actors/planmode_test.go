package actors

import "testing"

// TestDelegationWrites: while planning, a read-only task or fleet may run
// and one that gives any task write_paths waits for the plan.
func TestDelegationWrites(t *testing.T) {
	for args, want := range map[string]bool{
		`{"prompt":"look around"}`:                                             false,
		`{"prompt":"fix it","write_paths":["a.go"]}`:                           true,
		`{"tasks":[{"prompt":"a"},{"prompt":"b"}]}`:                            false,
		`{"tasks":[{"prompt":"a"},{"prompt":"b","write_paths":["docs/"]}]}`:    true,
		`{"tasks":[{"prompt":"a","write_paths":[]}],"budget":{"tokens":1000}}`: false,
		`not json`: true,
	} {
		if got := delegationWrites(args); got != want {
			t.Errorf("delegationWrites(%s) = %v, want %v", args, got, want)
		}
	}
}
