package memory

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest memory name, in bytes (names are ASCII).
const MaxNameLen = 64

// Scope says whose memory it is: the project's or the user's.
type Scope string

const (
	// Project memories belong to one project and live in its
	// .reasonix/memory directory.
	Project Scope = "project"
	// User memories follow the user into every project and live in the
	// reasonix home.
	User Scope = "user"
)

// Scopes lists every scope in precedence order: where two scopes hold the
// same name, the earlier one wins.
var Scopes = []Scope{Project, User}

// ParseScope reads a scope name as the tools accept it. An empty name is
// def.
func ParseScope(s string, def Scope) (Scope, error) {
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case "":
		return def, nil
	case Project, User:
		return sc, nil
	default:
		return "", fmt.Errorf("scope must be %q or %q, got %q", Project, User, s)
	}
}

// reservedNames are file names Windows will not create whatever the
// extension, so a memory saved on Linux could not be checked out there.
var reservedNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// ValidateName checks that name can be a memory's file name on every
// platform: 1 to MaxNameLen lowercase ASCII letters, digits, '-' and '_',
// starting with a letter or digit. The rule is strict on purpose: names
// become paths, so nothing that could climb out of the memory directory,
// differ only in case, or be hidden (a leading dot) is accepted. The error
// suggests a valid spelling when there is one.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("memory name is empty: use a short slug such as \"db-host\"")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("memory name %q is %d bytes long; the limit is %d", name, len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '-' || c == '_'))
		if !ok {
			return badName(name)
		}
	}
	if reservedNames[name] {
		return fmt.Errorf("memory name %q is reserved on Windows; choose another", name)
	}
	return nil
}

// badName is the error for a name with characters outside the slug rule.
func badName(name string) error {
	msg := fmt.Sprintf("memory name %q is not a slug: use lowercase letters, digits, '-' and '_', starting with a letter or digit", name)
	if s := Slug(name); s != "" && s != name {
		msg += fmt.Sprintf(" (for example %q)", s)
	}
	return fmt.Errorf("%s", msg)
}

// Slug turns free text into a valid memory name when it holds any ASCII
// letter or digit: lowercased, other runs of characters replaced by one
// '-', clipped to MaxNameLen. It returns "" when nothing usable is left.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' && b.Len() > 0:
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	out := b.String()
	if len(out) > MaxNameLen {
		out = strings.TrimRight(out[:MaxNameLen], "-_")
	}
	if ValidateName(out) != nil {
		return ""
	}
	return out
}
