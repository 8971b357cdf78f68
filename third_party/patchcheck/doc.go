// Package patchcheck checks the third-party trees kept under third_party/
// against the upstream they came from. It has no code of its own: its
// test rebuilds each copy (protoactor-go, chroma, glamour, bubbletea,
// goldmark) from the pristine upstream module (found in, or downloaded
// into, the module cache) and the patch series in the copy's patches/
// directory, and fails when the copy is anything else. It lives in the reasonix module because each copy is
// a module of its own (replaced into ours), whose tests `go test ./...`
// would not run.
package patchcheck
