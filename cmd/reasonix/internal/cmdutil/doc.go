// Package cmdutil is what every command of cmd/reasonix shares: the
// Factory (the process's streams and environment), typed errors and the
// one mapping from errors to exit codes, the stop signals, and loading the
// configuration a command runs under.
package cmdutil
