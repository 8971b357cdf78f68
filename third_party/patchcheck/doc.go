// Package patchcheck checks the third-party trees kept under third_party/
// against the upstream they came from. It has no code of its own: its
// test rebuilds third_party/protoactor-go from the pristine upstream
// module (found in, or downloaded into, the module cache) and the patch
// series in third_party/protoactor-go/patches, and fails when the copy is
// anything else. It lives in the reasonix module because the copy is a
// module of its own (replaced into ours), whose tests `go test ./...`
// would not run.
package patchcheck
