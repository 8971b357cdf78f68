//go:build !unix

package atomicfile

// syncDir does nothing: outside Unix a directory cannot be opened for
// syncing through the os package.
func syncDir(string) {}
