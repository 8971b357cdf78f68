package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// WorkerTokenEnv is the environment variable holding the shared secret of
// remote workers; it wins over [remote] token_file.
const WorkerTokenEnv = "REASONIX_WORKER_TOKEN"

// WorkerToken returns the shared secret a scheduler and its workers
// authenticate each other with: REASONIX_WORKER_TOKEN when set, else the
// contents of tokenFile, both trimmed of surrounding white space. Like ssh
// with a private key, it refuses a file that group or others may access
// (on systems with Unix permissions), since the token lets its holder run
// tasks on every worker. An empty result is an error naming both sources.
func WorkerToken(tokenFile string) (string, error) {
	return WorkerTokenFrom(os.Getenv, tokenFile)
}

// WorkerTokenFrom is WorkerToken reading the environment through getenv,
// for a caller that carries its own environment (a command under test), so
// the process environment cannot stand in for it.
func WorkerTokenFrom(getenv func(string) string, tokenFile string) (string, error) {
	if tok := strings.TrimSpace(getenv(WorkerTokenEnv)); tok != "" {
		return tok, nil
	}
	if tokenFile == "" {
		return "", fmt.Errorf("no worker token: set %s or [remote] token_file", WorkerTokenEnv)
	}
	info, err := os.Stat(tokenFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("no worker token: %s is not set and token_file %s does not exist", WorkerTokenEnv, tokenFile)
	case err != nil:
		return "", fmt.Errorf("worker token: %w", err)
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("worker token: token_file %s is not a regular file", tokenFile)
	case runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("worker token: token_file %s is accessible by group or others (mode %04o); run chmod 600 %s", tokenFile, info.Mode().Perm(), tokenFile)
	}
	data, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", fmt.Errorf("worker token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("no worker token: %s is not set and token_file %s is empty", WorkerTokenEnv, tokenFile)
	}
	return tok, nil
}
