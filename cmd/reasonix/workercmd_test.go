package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/workercmd"
)

func TestWorkerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     workercmd.WorkerOptions
		wantCode int
		wantErr  string
	}{
		{
			name: "listen only",
			args: []string{"--listen", "127.0.0.1:0"},
			want: workercmd.WorkerOptions{Listen: "127.0.0.1:0", Capacity: workercmd.DefaultWorkerCapacity},
		},
		{
			name: "every flag",
			args: []string{"--listen", "0.0.0.0:7420", "--advertise", "build1.lan:7420", "--name", "build1",
				"--workspace", "reasonix=/src/reasonix", "--workspace", "docs=../docs", "--capacity", "64",
				"--token-file", "/etc/reasonix/token", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-ca", "ca.pem",
				"--config", "w.toml", "--cwd", "/src"},
			want: workercmd.WorkerOptions{Listen: "0.0.0.0:7420", Advertise: "build1.lan:7420", Name: "build1",
				Workspaces: []string{"reasonix=/src/reasonix", "docs=../docs"}, Capacity: 64, TokenFile: "/etc/reasonix/token",
				TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "ca.pem", GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "w.toml", Cwd: "/src"}},
		},
		{name: "no listen", args: nil, wantCode: cmdutil.ExitUsage, wantErr: "--listen is required"},
		{name: "listen without a port", args: []string{"--listen", "localhost"}, wantCode: cmdutil.ExitUsage, wantErr: `--listen "localhost"`},
		{name: "bad advertise", args: []string{"--listen", ":0", "--advertise", "host"}, wantCode: cmdutil.ExitUsage, wantErr: "--advertise"},
		{name: "capacity 0", args: []string{"--listen", ":0", "--capacity", "0"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity 0"},
		{name: "capacity 65", args: []string{"--listen", ":0", "--capacity", "65"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity 65"},
		{name: "capacity not a number", args: []string{"--listen", ":0", "--capacity", "many"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity"},
		{name: "workspace without a path", args: []string{"--listen", ":0", "--workspace", "reasonix"}, wantCode: cmdutil.ExitUsage, wantErr: "NAME=PATH"},
		{name: "workspace without a name", args: []string{"--listen", ":0", "--workspace", "=/src"}, wantCode: cmdutil.ExitUsage, wantErr: "NAME=PATH"},
		{name: "workspace twice", args: []string{"--listen", ":0", "--workspace", "a=/x", "--workspace", "a=/y"}, wantCode: cmdutil.ExitUsage, wantErr: "served twice"},
		{name: "cert without key", args: []string{"--listen", ":0", "--tls-cert", "c.pem"}, wantCode: cmdutil.ExitUsage, wantErr: "go together"},
		{name: "ca alone", args: []string{"--listen", ":0", "--tls-ca", "ca.pem"}, wantCode: cmdutil.ExitUsage, wantErr: "--tls-ca goes with"},
		{name: "a name with a space", args: []string{"--listen", ":0", "--name", "build 1"}, wantCode: cmdutil.ExitUsage, wantErr: "--name"},
		{name: "positional argument", args: []string{"--listen", ":0", "extra"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown command"},
		{name: "unknown flag", args: []string{"--listen", ":0", "--port", "1"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *workercmd.WorkerOptions
			// Under the real root, so flag errors take the binary's
			// usage-error path.
			root := NewCmdRoot(f)
			for _, c := range root.Commands() {
				if c.Name() == "worker" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(workercmd.NewCmdWorker(f, func(o *workercmd.WorkerOptions) error { got = o; return nil }))
			opts, ok := invoke(t, root, append([]string{"worker"}, tt.args...), &got, tt.wantCode, tt.wantErr)
			if ok && !reflect.DeepEqual(opts, tt.want) {
				t.Errorf("options = %+v, want %+v", opts, tt.want)
			}
		})
	}
}
