package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/core/atomicfile"
)

// MaxPrompts is how many of a workspace's prompts the history keeps.
const MaxPrompts = 1000

// PromptsPath is the file of the prompts typed in cwd's chats:
// <home>/projects/<slug>/prompts.jsonl, beside the workspace's sessions.
func PromptsPath(home, cwd string) string {
	return filepath.Join(home, "projects", Slug(cwd), "prompts.jsonl")
}

type promptLine struct {
	Text string    `json:"text"`
	Time time.Time `json:"time"`
}

// LoadPrompts reads a prompt history, oldest first, at most MaxPrompts.
// A missing file is an empty history; a line that does not parse is
// skipped (the file only ever holds conveniences).
func LoadPrompts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read prompt history: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var l promptLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && strings.TrimSpace(l.Text) != "" {
			out = append(out, l.Text)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read prompt history: %w", err)
	}
	if len(out) > MaxPrompts {
		out = out[len(out)-MaxPrompts:]
	}
	return out, nil
}

// AppendPrompt adds text to the history at path (created 0600: prompts
// may hold what only the user should read). Once the file holds twice
// MaxPrompts it is rewritten with the newest MaxPrompts.
func AppendPrompt(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save prompt: %w", err)
	}
	line, err := json.Marshal(promptLine{Text: text, Time: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("save prompt: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("save prompt: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("save prompt: %w", err)
	}
	return trimPrompts(path)
}

// trimPrompts rewrites the history with its newest MaxPrompts lines once
// it has grown to twice that.
func trimPrompts(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("trim prompt history: %w", err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) <= 2*MaxPrompts+1 {
		return nil
	}
	keep := strings.Join(lines[len(lines)-MaxPrompts-1:], "")
	if err := atomicfile.Write(path, []byte(keep), 0o600); err != nil {
		return fmt.Errorf("trim prompt history: %w", err)
	}
	return nil
}
