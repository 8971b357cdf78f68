package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAPIKeyFromEnvironment(t *testing.T) {
	// Not parallel: t.Setenv changes the process environment.
	home := t.TempDir()
	writeDotEnv(t, home, "RX_TEST_ENV_KEY=from-file\n")
	p := ProviderConfig{Name: "p", APIKeyEnv: "RX_TEST_ENV_KEY"}
	var c Config

	t.Setenv("RX_TEST_ENV_KEY", "from-env")
	if got, err := c.APIKey(p, home); err != nil || got != "from-env" {
		t.Errorf("APIKey = %q, %v; want the environment value", got, err)
	}
	t.Setenv("RX_TEST_ENV_KEY", "")
	if got, err := c.APIKey(p, home); err != nil || got != "from-file" {
		t.Errorf("APIKey with an empty variable = %q, %v; want the .env value", got, err)
	}
}

func writeDotEnv(t *testing.T, home, text string) string {
	t.Helper()
	path := DotEnvPath(home)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAPIKeyFromDotEnv(t *testing.T) {
	t.Parallel()
	const env = "RX_TEST_DOTENV_KEY_7F3A"
	tests := []struct {
		name string
		file string
		want string
	}{
		{"plain", env + "=abc\n", "abc"},
		{"export prefix", "export " + env + "=abc\n", "abc"},
		{"spaces around equals", env + " = abc \n", "abc"},
		{"double quotes", env + "=\"a b#c\"\n", "a b#c"},
		{"double quote escapes", env + "=\"a\\\"b\\\\c\"\n", "a\"b\\c"},
		{"single quotes literal", env + "='a\\nb'\n", "a\\nb"},
		{"inline comment", env + "=abc # saved by setup\n", "abc"},
		{"hash inside value", env + "=ab#c\n", "ab#c"},
		{"comments and blanks", "# keys\n\n  # more\nOTHER=1\n" + env + "=abc\n", "abc"},
		{"crlf line endings", "OTHER=1\r\n" + env + "=abc\r\n", "abc"},
		{"later line wins", env + "=old\n" + env + "=new\n", "new"},
		{"byte order mark", "\ufeff" + env + "=abc\n", "abc"},
		{"malformed lines ignored", "not a line\n=x\nbad key=1\n" + env + "=abc\n", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			writeDotEnv(t, home, tt.file)
			c := Config{Home: home}
			got, err := c.APIKey(ProviderConfig{Name: "p", APIKeyEnv: env}, "")
			if err != nil || got != tt.want {
				t.Errorf("APIKey = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestAPIKeyMissing(t *testing.T) {
	t.Parallel()
	const env = "RX_TEST_MISSING_KEY_91C2"
	tests := []struct {
		name string
		file string // "" means no .env file
	}{
		{"no env file", ""},
		{"env file without the variable", "OTHER=1\n"},
		{"empty value", env + "=\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if tt.file != "" {
				writeDotEnv(t, home, tt.file)
			}
			var c Config
			_, err := c.APIKey(ProviderConfig{Name: "p", APIKeyEnv: env}, home)
			if !errors.Is(err, ErrMissingAPIKey) {
				t.Fatalf("err = %v, want ErrMissingAPIKey", err)
			}
			for _, w := range []string{env, DotEnvPath(home), "reasonix setup", "export " + env} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestAPIKeyNotNeeded(t *testing.T) {
	t.Parallel()
	var c Config
	got, err := c.APIKey(ProviderConfig{Name: "local"}, t.TempDir())
	if got != "" || err != nil {
		t.Errorf("APIKey = %q, %v; want no key and no error", got, err)
	}
}

func TestAPIKeyUnreadableDotEnv(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	// A directory where the file should be cannot be read on any platform.
	if err := os.Mkdir(filepath.Join(home, ".env"), 0o755); err != nil {
		t.Fatal(err)
	}
	var c Config
	_, err := c.APIKey(ProviderConfig{Name: "p", APIKeyEnv: "RX_TEST_UNREADABLE_55"}, home)
	if err == nil || errors.Is(err, ErrMissingAPIKey) {
		t.Errorf("err = %v, want a read error", err)
	}
}

func TestReadDotEnvMissing(t *testing.T) {
	t.Parallel()
	_, err := ReadDotEnv(filepath.Join(t.TempDir(), ".env"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestSaveAPIKey(t *testing.T) {
	t.Parallel()
	const env = "DEEPSEEK_API_KEY"
	tests := []struct {
		name  string
		file  string // "" means no .env file
		value string
		want  string
	}{
		{name: "new file", value: "sk-abc123", want: env + "=sk-abc123\n"},
		{name: "appended to other lines", file: "OTHER=1", value: "sk-new", want: "OTHER=1\n" + env + "=sk-new\n"},
		{
			name:  "first assignment replaced, later ones dropped, others kept",
			file:  "# keys\nOTHER=1\nexport " + env + "=sk-old\n" + env + "_BACKUP=x\n\n" + env + " = 'sk-older'\nLAST=2",
			value: "sk-new",
			want:  "# keys\nOTHER=1\n" + env + "=sk-new\n" + env + "_BACKUP=x\n\nLAST=2\n",
		},
		{name: "crlf file", file: "OTHER=1\r\n" + env + "=old\r\n", value: "sk-new", want: "OTHER=1\n" + env + "=sk-new\n"},
		{name: "commented assignment kept", file: "# " + env + "=old\n", value: "sk-new", want: "# " + env + "=old\n" + env + "=sk-new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			path := DotEnvPath(home)
			if tt.file != "" {
				if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := SaveAPIKey(home, env, tt.value); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tt.want {
				t.Errorf(".env = %q, want %q", data, tt.want)
			}
			if st, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
				t.Errorf("mode %04o, want 0600", st.Mode().Perm())
			}
			vars, err := ReadDotEnv(path)
			if err != nil || vars[env] != tt.value {
				t.Errorf("read back %q, %v; want %q", vars[env], err, tt.value)
			}
		})
	}
}

func TestSaveAPIKeyRefusesWhatWouldNotReadBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, key, value string }{
		{"bad name", "BAD NAME", "sk"},
		{"leading space", "K", " sk"},
		{"quoted", "K", `"sk"`},
		{"inline comment", "K", "sk #x"},
		{"newline", "K", "sk\nL=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if err := SaveAPIKey(home, tt.key, tt.value); err == nil {
				t.Error("SaveAPIKey accepted it")
			}
			if _, err := os.Stat(DotEnvPath(home)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused key wrote the file: %v", err)
			}
		})
	}
}
