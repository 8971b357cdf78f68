package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// pluginBinary is the real command, built once for the end-to-end tests.
var pluginBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reasonix-plugin-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBinary = filepath.Join(dir, "reasonix-plugin-example")
	if runtime.GOOS == "windows" {
		pluginBinary += ".exe"
	}
	build := exec.Command("go", "build", "-o", pluginBinary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build reasonix-plugin-example: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
