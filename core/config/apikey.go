package config

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"reasonix/core/atomicfile"
)

// ErrMissingAPIKey is wrapped by APIKey when a provider's key is found
// neither in the environment nor in the home .env file.
var ErrMissingAPIKey = errors.New("missing api key")

// APIKey returns the key for provider p: the environment variable named by
// p.APIKeyEnv when set and non-empty, else the same name in <home>/.env.
// An empty APIKeyEnv means the endpoint needs no key and yields "". An
// empty home means c.Home.
func (c *Config) APIKey(p ProviderConfig, home string) (string, error) {
	if p.APIKeyEnv == "" {
		return "", nil
	}
	getenv := c.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if v := getenv(p.APIKeyEnv); v != "" {
		return v, nil
	}
	if home == "" {
		home = c.Home
	}
	path := DotEnvPath(home)
	vars, err := ReadDotEnv(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("api key for provider %q: %w", p.Name, err)
	}
	if v := vars[p.APIKeyEnv]; v != "" {
		return v, nil
	}
	return "", fmt.Errorf("provider %q: %s is not set in the environment or in %s; run `reasonix setup` or export %s: %w",
		p.Name, p.APIKeyEnv, path, p.APIKeyEnv, ErrMissingAPIKey)
}

// SaveAPIKey sets name=value in <home>/.env, the file APIKey reads. The
// first line that assigns name is replaced and later ones are dropped (the
// last assignment would otherwise win when the file is read); every other
// line is kept as it was. The file ends up with mode 0600 whatever it had
// before. A name or value that ReadDotEnv would not give back unchanged is
// refused rather than written mangled.
func SaveAPIKey(home, name, value string) error {
	assignment := name + "=" + value
	if k, v, ok := parseDotEnvLine(assignment); !ok || k != name || v != value || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("save %s: the name or the value would not read back unchanged from a .env file", name)
	}
	path := DotEnvPath(home)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var out []string
	replaced := false
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if text != "" {
		for _, line := range strings.Split(text, "\n") {
			if k, _, ok := parseDotEnvLine(line); !ok || k != name {
				out = append(out, line)
				continue
			}
			if !replaced {
				out = append(out, assignment)
				replaced = true
			}
		}
	}
	if !replaced {
		out = append(out, assignment)
	}
	if err := atomicfile.Write(path, []byte(strings.Join(out, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadDotEnv reads KEY=VALUE lines from path. Blank lines and lines
// starting with # are skipped, an "export " prefix is allowed, values may
// be wrapped in single quotes (taken literally) or double quotes (\n, \",
// \\ escapes), and an unquoted value ends at " #". Lines without "=" are
// ignored; a later line wins over an earlier one. A missing file yields an
// error matching fs.ErrNotExist.
func ReadDotEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read env file: %w", err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if k, v, ok := parseDotEnvLine(sc.Text()); ok {
			vars[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read env file %s: %w", path, err)
	}
	return vars, nil
}

func parseDotEnvLine(line string) (key, value string, ok bool) {
	line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
	if line == "" || strings.HasPrefix(line, "#") {
		return "", "", false
	}
	if rest, found := strings.CutPrefix(line, "export"); found && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		line = strings.TrimSpace(rest)
	}
	key, value, ok = strings.Cut(line, "=")
	key = strings.TrimSpace(key)
	if !ok || !isEnvName(key) {
		return "", "", false
	}
	value = strings.TrimSpace(value)
	switch {
	case len(value) >= 2 && value[0] == '\'' && strings.IndexByte(value[1:], '\'') >= 0:
		value = value[1 : 1+strings.IndexByte(value[1:], '\'')]
	case len(value) >= 2 && value[0] == '"':
		value = unquoteDouble(value[1:])
	default:
		if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
		if i := strings.Index(value, "\t#"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
	}
	return key, value, true
}

// unquoteDouble reads a double-quoted value up to its closing quote; an
// unterminated value keeps the rest of the line.
func unquoteDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			return b.String()
		case ch == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
