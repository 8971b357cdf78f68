package config

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestHome(t *testing.T) {
	t.Parallel()
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	userHome := func() (string, error) { return filepath.FromSlash("/home/u"), nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name     string
		goos     string
		vars     map[string]string
		userHome func() (string, error)
		want     string
		wantErr  bool
	}{
		{"override wins", "linux", map[string]string{HomeEnv: "/opt/rx"}, noHome, "/opt/rx", false},
		{"override wins on windows", "windows", map[string]string{HomeEnv: `D:\rx`, "AppData": `C:\Users\u\AppData\Roaming`}, noHome, `D:\rx`, false},
		{"linux dot dir", "linux", nil, userHome, filepath.Join(filepath.FromSlash("/home/u"), ".reasonix"), false},
		{"darwin dot dir", "darwin", nil, userHome, filepath.Join(filepath.FromSlash("/home/u"), ".reasonix"), false},
		{"windows appdata", "windows", map[string]string{"AppData": "appdata"}, noHome, filepath.Join("appdata", "reasonix"), false},
		{"windows without appdata", "windows", nil, userHome, "", true},
		{"no user home", "linux", nil, noHome, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := home(tt.goos, env(tt.vars), tt.userHome)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("home = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	h := filepath.FromSlash("/h")
	if got, want := UserConfigPath(h), filepath.Join(h, "config.toml"); got != want {
		t.Errorf("UserConfigPath = %q, want %q", got, want)
	}
	if got, want := ProjectConfigPath(h), filepath.Join(h, "reasonix.toml"); got != want {
		t.Errorf("ProjectConfigPath = %q, want %q", got, want)
	}
	if got, want := DotEnvPath(h), filepath.Join(h, ".env"); got != want {
		t.Errorf("DotEnvPath = %q, want %q", got, want)
	}
}
