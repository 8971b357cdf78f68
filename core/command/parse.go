package command

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"reasonix/core/text"
)

// maxDescription bounds a description taken from the body's first line,
// so a menu row stays one line.
const maxDescription = 80

// Parse reads a command file's contents into a Command with Description,
// ArgumentHint and Body set; the caller names it.
//
// The frontmatter is optional. When present it opens with a line "---"
// and closes with the next line "---"; between them each line is
// "key: value", blank, or a "#" comment. Keys are case-insensitive;
// "description" and "argument-hint" are used, others ignored, so a file
// written for another tool still loads. A value may be wrapped in one
// pair of matching quotes. No YAML beyond that: a line without a colon
// is an error rather than a guess.
func Parse(data []byte) (Command, error) {
	if !utf8.Valid(data) {
		return Command{}, errors.New("command file is not valid UTF-8")
	}
	s := strings.TrimPrefix(string(data), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var c Command
	front, body, err := splitFrontmatter(s)
	if err != nil {
		return Command{}, err
	}
	for i, line := range front {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, value, ok := strings.Cut(trimmed, ":")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || key == "" {
			return Command{}, fmt.Errorf("frontmatter line %d: want key: value, got %q", i+2, trimmed)
		}
		value = unquote(strings.TrimSpace(value))
		switch key {
		case "description":
			c.Description = value
		case "argument-hint":
			c.ArgumentHint = value
		}
	}
	c.Body = strings.TrimSpace(body)
	if c.Body == "" {
		return Command{}, errors.New("command has an empty body")
	}
	if c.Description == "" {
		first, _, _ := strings.Cut(c.Body, "\n")
		c.Description = text.OneLine(first, maxDescription)
	}
	return c, nil
}

// splitFrontmatter separates the frontmatter lines from the body; an
// opening fence without a closing one is an error, since guessing where
// the template starts could send the model half a header.
func splitFrontmatter(s string) (front []string, body string, err error) {
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return nil, s, nil
	}
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t") == "---" {
			return front, rest, nil
		}
		front = append(front, line)
	}
	return nil, "", errors.New("frontmatter has no closing --- line")
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
