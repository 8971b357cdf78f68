package skill

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// layout is a test tree: relative file path → contents.
type layout map[string]string

func (l layout) write(t *testing.T, base string) {
	t.Helper()
	for rel, body := range l {
		path := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// profileMD is a SKILL.md for a subagent profile with a recognisable body.
func profileMD(body string, extra ...string) string {
	return "---\nrunAs: subagent\n" + strings.Join(extra, "\n") + "\n---\n" + body + "\n"
}

// summary is what the load tests compare: name → source:body.
func summary(st *Store) map[string]string {
	out := map[string]string{}
	for _, s := range st.Skills() {
		body := s.Body
		if s.Source == SourceBuiltin {
			body = "(built-in)"
		}
		out[s.Name] = string(s.Source) + ":" + body
	}
	return out
}

func TestLoadPrecedenceAndFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// files are laid out under one temporary directory that holds
		// work/ (the workspace), home/ (the Reasonix home), me/ (the
		// user's home) and extra/, extra2/ (configured paths).
		files    layout
		opts     func(base string) Options
		want     map[string]string
		wantWarn []string
	}{
		{
			name:  "built-ins alone",
			files: layout{},
			want:  map[string]string{"explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "project beats user beats path beats built-in",
			files: layout{
				"work/.reasonix/skills/explore/SKILL.md": profileMD("project explore"),
				"home/skills/explore/SKILL.md":           profileMD("user explore"),
				"home/skills/review/SKILL.md":            profileMD("user review"),
				"extra/review/SKILL.md":                  profileMD("path review"),
				"extra/audit/SKILL.md":                   profileMD("path audit"),
			},
			want: map[string]string{
				"explore": "project:project explore",
				"review":  "user:user review",
				"audit":   "path:path audit",
			},
		},
		{
			name: "earlier configured path wins",
			files: layout{
				"extra/audit/SKILL.md":  profileMD("first"),
				"extra2/audit/SKILL.md": profileMD("second"),
			},
			opts: func(base string) Options {
				return Options{Paths: []string{filepath.Join(base, "extra"), filepath.Join(base, "extra2")}}
			},
			want: map[string]string{"audit": "path:first", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "frontmatter name decides the clash, not the directory",
			files: layout{
				"work/.reasonix/skills/my-review/SKILL.md": profileMD("renamed", "name: review"),
			},
			want: map[string]string{"explore": "built-in:(built-in)", "review": "project:renamed"},
		},
		{
			name: "an ordinary skill hides a built-in profile of its name",
			files: layout{
				"home/skills/explore/SKILL.md": "plain skill",
			},
			want: map[string]string{"explore": "user:plain skill", "review": "built-in:(built-in)"},
		},
		{
			name: "excluded root",
			files: layout{
				"work/.reasonix/skills/audit/SKILL.md": profileMD("project audit"),
				"home/skills/audit/SKILL.md":           profileMD("user audit"),
			},
			opts: func(base string) Options {
				o := defaultOpts(base)
				o.ExcludedPaths = []string{filepath.Join(base, "work", ".reasonix", "skills")}
				return o
			},
			want: map[string]string{"audit": "user:user audit", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "excluded with ~ and a single skill directory",
			files: layout{
				"me/agents/a/SKILL.md": profileMD("a"),
				"me/agents/b/SKILL.md": profileMD("b"),
			},
			opts: func(base string) Options {
				o := defaultOpts(base)
				o.Paths = []string{"~/agents"}
				o.ExcludedPaths = []string{"~/agents/b"}
				return o
			},
			want: map[string]string{"a": "path:a", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "excluding a parent hides the roots below it",
			files: layout{
				"me/agents/a/SKILL.md": profileMD("a"),
			},
			opts: func(base string) Options {
				o := defaultOpts(base)
				o.Paths = []string{"~/agents"}
				o.ExcludedPaths = []string{"~"}
				return o
			},
			want: map[string]string{"explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "relative paths resolve against the workspace",
			files: layout{
				"shared/skills/team/SKILL.md": profileMD("team"),
			},
			opts: func(base string) Options {
				o := defaultOpts(base)
				o.Paths = []string{"../shared/skills", "  "}
				return o
			},
			want: map[string]string{"team": "path:team", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "disabled names vanish, built-ins included",
			files: layout{
				"work/.reasonix/skills/audit/SKILL.md": profileMD("audit"),
				"home/skills/review/SKILL.md":          profileMD("user review"),
			},
			opts: func(base string) Options {
				o := defaultOpts(base)
				o.Disabled = []string{"review", "explore", "audit"}
				return o
			},
			want: map[string]string{},
		},
		{
			name: "malformed files are skipped with a warning",
			files: layout{
				"work/.reasonix/skills/broken/SKILL.md": "---\nname: broken\n",
				"work/.reasonix/skills/ok/SKILL.md":     profileMD("fine"),
				"home/skills/broken/SKILL.md":           profileMD("user broken"),
			},
			want: map[string]string{
				"broken":  "user:user broken",
				"ok":      "project:fine",
				"explore": "built-in:(built-in)", "review": "built-in:(built-in)",
			},
			wantWarn: []string{"work/.reasonix/skills/broken/SKILL.md: skipped: frontmatter: no closing ---"},
		},
		{
			name: "directories without SKILL.md, dot directories and loose files are ignored",
			files: layout{
				"work/.reasonix/skills/notes/README.md":     "not a skill",
				"work/.reasonix/skills/.hidden/SKILL.md":    profileMD("hidden"),
				"work/.reasonix/skills/loose.md":            "loose",
				"work/.reasonix/skills/SKILL.md":            "at the root",
				"work/.reasonix/skills/real/SKILL.md":       profileMD("real"),
				"work/.reasonix/skills/real/extra/SKILL.md": profileMD("nested"),
			},
			want: map[string]string{"real": "project:real", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
		},
		{
			name: "two skills claiming one name in one root",
			files: layout{
				"home/skills/a/SKILL.md": profileMD("first", "name: same"),
				"home/skills/b/SKILL.md": profileMD("second", "name: same"),
			},
			want:     map[string]string{"same": "user:first", "explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
			wantWarn: []string{"home/skills/b/SKILL.md: name \"same\" is already used by"},
		},
		{
			name:  "~ without a home directory",
			files: layout{},
			opts: func(base string) Options {
				return Options{Workspace: filepath.Join(base, "work"), Paths: []string{"~/x"}}
			},
			want:     map[string]string{"explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
			wantWarn: []string{"~/x: [skills] paths: \"~/x\": ~ needs a home directory"},
		},
		{
			name:     "a root that is a file",
			files:    layout{"home/skills": "oops"},
			want:     map[string]string{"explore": "built-in:(built-in)", "review": "built-in:(built-in)"},
			wantWarn: []string{"home/skills: read user skill root"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			tt.files.write(t, base)
			opts := defaultOpts(base)
			if tt.opts != nil {
				opts = tt.opts(base)
			}
			st, warns := Load(opts)
			if got := summary(st); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("skills =\n%v\nwant\n%v", got, tt.want)
			}
			var got []string
			for _, w := range warns {
				path := w.Path
				if rel, err := filepath.Rel(base, path); err == nil && filepath.IsAbs(path) {
					path = filepath.ToSlash(rel)
				}
				got = append(got, path+": "+w.Err.Error())
			}
			if len(got) != len(tt.wantWarn) {
				t.Fatalf("warnings = %q, want %d matching %q", got, len(tt.wantWarn), tt.wantWarn)
			}
			for i, w := range tt.wantWarn {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("warning %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

func defaultOpts(base string) Options {
	return Options{
		Workspace: filepath.Join(base, "work"),
		Home:      filepath.Join(base, "home"),
		UserHome:  filepath.Join(base, "me"),
		Paths:     []string{filepath.Join(base, "extra")},
	}
}

func TestLoadKeepsPathAndSorts(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	layout{
		"work/.reasonix/skills/zeta/SKILL.md":  profileMD("z", "model: fake/pro", "effort: high", "description: last"),
		"work/.reasonix/skills/alpha/SKILL.md": "---\ndescription: not a profile\n---\nplain",
	}.write(t, base)
	st, warns := Load(defaultOpts(base))
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	var names []string
	for _, s := range st.Skills() {
		names = append(names, s.Name)
	}
	if want := []string{"alpha", "explore", "review", "zeta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("skills = %v, want %v", names, want)
	}
	var profiles []string
	for _, p := range st.Profiles() {
		profiles = append(profiles, p.Name)
	}
	if want := []string{"explore", "review", "zeta"}; !reflect.DeepEqual(profiles, want) {
		t.Errorf("profiles = %v, want %v", profiles, want)
	}
	z, err := st.Profile("zeta")
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(base, "work", ".reasonix", "skills", "zeta", FileName)
	if z.Path != wantPath || z.Source != SourceProject || z.Model != "fake/pro" || z.Effort != "high" || z.Description != "last" {
		t.Errorf("zeta = %+v", z)
	}
}

func TestLoadFollowsSymlinkedSkillDirs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	layout{"elsewhere/linked/SKILL.md": profileMD("via link")}.write(t, base)
	root := filepath.Join(base, "work", ".reasonix", "skills")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "elsewhere", "linked"), filepath.Join(root, "linked")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	st, _ := Load(defaultOpts(base))
	if p, err := st.Profile("linked"); err != nil || p.Body != "via link" {
		t.Errorf("Profile(linked) = %+v, %v", p, err)
	}
}

func TestProfileErrors(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	layout{
		"work/.reasonix/skills/notes/SKILL.md": "plain skill",
		"work/.reasonix/skills/audit/SKILL.md": profileMD("audit"),
	}.write(t, base)
	opts := defaultOpts(base)
	opts.Disabled = []string{"review"}
	st, _ := Load(opts)
	tests := []struct {
		name, profile string
		want          []string
	}{
		{"unknown", "nope", []string{`unknown subagent profile "nope"`, "available: audit, explore"}},
		{"not a profile", "notes", []string{`"notes"`, "runAs: subagent", "available: audit, explore"}},
		{"disabled", "review", []string{`"review"`, "disabled_skills", "available: audit, explore"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := st.Profile(tt.profile)
			if !errors.Is(err, ErrUnknownProfile) {
				t.Fatalf("Profile(%q) error = %v, want ErrUnknownProfile", tt.profile, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	empty, _ := Load(Options{Disabled: []string{"explore", "review"}})
	if _, err := empty.Profile("explore"); err == nil || !strings.Contains(err.Error(), "available: none") {
		t.Errorf("with no profiles: %v", err)
	}
}

func TestBuiltinProfiles(t *testing.T) {
	t.Parallel()
	st, warns := Load(Options{})
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	for name, words := range map[string][]string{
		"explore": {"path:line", "change nothing"},
		"review":  {"severity", "path:line", "missing"},
	} {
		p, err := st.Profile(name)
		if err != nil {
			t.Fatalf("Profile(%q): %v", name, err)
		}
		if p.Source != SourceBuiltin || p.Path != "" || p.Description == "" {
			t.Errorf("%s = %+v", name, p.Skill)
		}
		for _, w := range words {
			if !strings.Contains(p.SystemPrompt(), w) {
				t.Errorf("%s prompt lacks %q", name, w)
			}
		}
	}
}
