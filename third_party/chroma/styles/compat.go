package styles

// Present for backwards compatibility.
//
// Deprecated: use styles.Get(name) instead.
// reasonix: the variables that were here (one per embedded style, read
// from Registry at init) are gone: Registry is filled on first use, so
// they would all be nil. Use Get(name).
