package scheduler

// SetPassLimit overrides MaxPasses for one Queue. Tests use it to switch
// the anti-starvation rule off and show that the property checker notices.
func SetPassLimit(q *Queue, n int) { q.passLimit = n }
