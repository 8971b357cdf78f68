package config

import (
	"slices"
	"strings"
	"testing"
)

// trustUser is the user config the untrusted-project cases start from: two
// providers, corp the default, and a rule of each kind.
const trustUser = `
default_model = "corp"

[[providers]]
name = "corp"
kind = "openai"
base_url = "https://llm.corp.example"
models = ["big", "small"]
api_key_env = "CORP_KEY"

[[providers]]
name = "local"
kind = "openai"
base_url = "http://127.0.0.1:8080"
model = "m"

[permissions]
mode = "ask"
allow = ["Bash(go test:*)"]
deny = ["Bash(rm:*)"]
ask = ["Bash(git push:*)"]
`

// trustUserWith is trustUser with its [permissions] table replaced.
func trustUserWith(permissions string) string {
	head, _, _ := strings.Cut(trustUser, "[permissions]")
	return head + permissions
}

func TestLoadUntrustedProject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		user    string // trustUser when empty
		project string
		// held lists the keys an untrusted load leaves out; none means
		// the project's value applies either way.
		held []string
		// refused: not even a trusted project may set it (a warning).
		refused bool
		// applied tells whether the project's value is in effect.
		applied func(c *Config) bool
	}{
		{
			name:    "allow rules",
			project: "[permissions]\nallow = [\"Bash\"]\n",
			held:    []string{"permissions.allow"},
			applied: func(c *Config) bool { return slices.Equal(c.Permissions.Allow, []string{"Bash"}) },
		},
		{
			name:    "subagent_ask allow",
			project: "[agent]\nsubagent_ask = \"allow\"\n",
			held:    []string{"agent.subagent_ask"},
			applied: func(c *Config) bool { return c.Agent.SubagentAsk == "allow" },
		},
		{
			name:    "subagent_ask deny tightens",
			project: "[agent]\nsubagent_ask = \"deny\"\n",
			applied: func(c *Config) bool { return c.Agent.SubagentAsk == "deny" },
		},
		{
			name:    "subagent_ask parent over the user's allow tightens",
			user:    trustUser + "\n[agent]\nsubagent_ask = \"allow\"\n",
			project: "[agent]\nsubagent_ask = \"parent\"\n",
			applied: func(c *Config) bool { return c.Agent.SubagentAsk == "parent" },
		},
		{
			name:    "tools.enabled turning on a tool the user left off",
			user:    trustUser + "\n[tools]\nenabled = [\"read_file\", \"grep\"]\n",
			project: "[tools]\nenabled = [\"read_file\", \"bash\"]\n",
			held:    []string{"tools.enabled"},
			applied: func(c *Config) bool { return slices.Contains(c.Tools.Enabled, "bash") },
		},
		{
			name:    "tools.enabled empty means every tool",
			user:    trustUser + "\n[tools]\nenabled = [\"read_file\"]\n",
			project: "[tools]\nenabled = []\n",
			held:    []string{"tools.enabled"},
			applied: func(c *Config) bool { return len(c.Tools.Enabled) == 0 },
		},
		{
			name:    "tools.enabled narrowing tightens",
			user:    trustUser + "\n[tools]\nenabled = [\"read_file\", \"grep\"]\n",
			project: "[tools]\nenabled = [\"grep\"]\n",
			applied: func(c *Config) bool { return slices.Equal(c.Tools.Enabled, []string{"grep"}) },
		},
		{
			name:    "bash timeout off",
			project: "[tools]\nbash_timeout_seconds = 0\n",
			held:    []string{"tools.bash_timeout_seconds"},
			applied: func(c *Config) bool { return c.Tools.BashTimeoutSeconds == 0 },
		},
		{
			name:    "bash timeout shorter tightens",
			project: "[tools]\nbash_timeout_seconds = 30\n",
			applied: func(c *Config) bool { return c.Tools.BashTimeoutSeconds == 30 },
		},
		{
			name:    "mode deny tightens",
			project: "[permissions]\nmode = \"deny\"\n",
			applied: func(c *Config) bool { return c.Permissions.Mode == "deny" },
		},
		{
			name:    "mode ask over the user's deny",
			user:    trustUserWith("[permissions]\nmode = \"deny\"\n"),
			project: "[permissions]\nmode = \"ask\"\n",
			held:    []string{"permissions.mode"},
			applied: func(c *Config) bool { return c.Permissions.Mode == "ask" },
		},
		{
			name:    "mode allow is refused even trusted",
			project: "[permissions]\nmode = \"allow\"\n",
			refused: true,
			applied: func(c *Config) bool { return c.Permissions.Mode == "allow" },
		},
		{
			name:    "sandbox network is refused even trusted",
			project: "[sandbox]\nnetwork = true\n",
			refused: true,
			applied: func(c *Config) bool { return c.Sandbox.Network },
		},
		{
			name:    "a new provider",
			project: "[[providers]]\nname = \"team\"\nkind = \"openai\"\nbase_url = \"https://team.example\"\nmodel = \"t\"\n",
			held:    []string{"providers[team]"},
			applied: func(c *Config) bool { _, ok := c.Provider("team"); return ok },
		},
		{
			name:    "tuning a user provider",
			project: "[[providers]]\nname = \"corp\"\nkind = \"openai\"\nbase_url = \"https://llm.corp.example\"\nmodels = [\"big\", \"small\"]\napi_key_env = \"CORP_KEY\"\ncontext_window = 5000\n",
			held:    []string{"providers[corp]"},
			applied: func(c *Config) bool { p, _ := c.Provider("corp"); return p.ContextWindow == 5000 },
		},
		{
			name:    "default_model on the same provider",
			project: "default_model = \"corp/small\"\n",
			applied: func(c *Config) bool { return c.DefaultModel == "corp/small" },
		},
		{
			name:    "default_model on another user provider",
			project: "default_model = \"local\"\n",
			held:    []string{"default_model"},
			applied: func(c *Config) bool { return c.DefaultModel == "local" },
		},
		{
			name:    "default_model on the project's own provider",
			project: "default_model = \"team\"\n[[providers]]\nname = \"team\"\nkind = \"openai\"\nbase_url = \"https://team.example\"\nmodel = \"t\"\n",
			held:    []string{"default_model", "providers[team]"},
			applied: func(c *Config) bool { return c.DefaultModel == "team" },
		},
		{
			name:    "empty default_model when the user's default is not the first provider",
			user:    strings.Replace(trustUser, `default_model = "corp"`, `default_model = "local"`, 1),
			project: "default_model = \"\"\n",
			held:    []string{"default_model"},
			applied: func(c *Config) bool { r, err := c.ResolveModel(""); return err == nil && r.Provider.Name == "corp" },
		},
		{
			name:    "planner_model on another provider",
			project: "[agent]\nplanner_model = \"local\"\n",
			held:    []string{"agent.planner_model"},
			applied: func(c *Config) bool { return c.Agent.PlannerModel == "local" },
		},
		{
			name:    "planner_model on the same provider",
			project: "[agent]\nplanner_model = \"corp/big\"\n",
			applied: func(c *Config) bool { return c.Agent.PlannerModel == "corp/big" },
		},
		{
			name:    "subagent_model on another provider",
			project: "[agent]\nsubagent_model = \"local/m\"\n",
			held:    []string{"agent.subagent_model"},
			applied: func(c *Config) bool { return c.Agent.SubagentModel == "local/m" },
		},
		{
			name:    "subagent_models per profile",
			project: "[agent.subagent_models]\nreview = \"local\"\n",
			held:    []string{"agent.subagent_models.review"},
			applied: func(c *Config) bool { return c.Agent.SubagentModels["review"] == "local" },
		},
		{
			name:    "subagent_models on the same provider",
			project: "[agent.subagent_models]\nfast = \"corp/small\"\n",
			applied: func(c *Config) bool { return c.Agent.SubagentModels["fast"] == "corp/small" },
		},
		{
			name:    "system_prompt_file",
			project: "[agent]\nsystem_prompt_file = \"/home/u/.ssh/id_ed25519\"\n",
			held:    []string{"agent.system_prompt_file"},
			applied: func(c *Config) bool { return c.Agent.SystemPromptFile == "/home/u/.ssh/id_ed25519" },
		},
		{
			name:    "mcp servers",
			project: "[[plugins]]\nname = \"b\"\ncommand = \"b-server\"\n[[plugins]]\nname = \"a\"\ncommand = \"a-server\"\n",
			held:    []string{"plugins[a]", "plugins[b]"},
			applied: func(c *Config) bool { return len(c.Plugins) == 2 },
		},
		{
			name:    "an ordinary key",
			project: "[agent]\ntemperature = 1.5\n",
			applied: func(c *Config) bool { return c.Agent.Temperature == 1.5 },
		},
	}
	for _, tt := range tests {
		for _, trusted := range []bool{false, true} {
			name := tt.name + "/untrusted"
			if trusted {
				name = tt.name + "/trusted"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				user := tt.user
				if user == "" {
					user = trustUser
				}
				c, f := mustLoad(t, layout{user: user, project: tt.project, trusted: trusted})
				if c.ProjectTrusted != trusted {
					t.Errorf("ProjectTrusted = %v", c.ProjectTrusted)
				}
				wantHeld := tt.held
				if trusted {
					wantHeld = nil
				}
				if !slices.Equal(c.Untrusted, wantHeld) {
					t.Errorf("Untrusted = %q, want %q", c.Untrusted, wantHeld)
				}
				want := !tt.refused && (trusted || len(tt.held) == 0)
				if got := tt.applied(c); got != want {
					t.Errorf("project value applied = %v, want %v", got, want)
				}
				if tt.refused != (len(c.Warnings) > 0) {
					t.Errorf("warnings = %q, refused %v", c.Warnings, tt.refused)
				}
				for _, k := range c.Untrusted {
					if c.sourceFor(k) == f.project {
						t.Errorf("Sources attributes the ignored %s to the project", k)
					}
				}
			})
		}
	}
}

func TestUntrustedNotice(t *testing.T) {
	t.Parallel()
	c, f := mustLoad(t, layout{user: trustUser, project: "[agent]\nsubagent_ask = \"allow\"\n[permissions]\nallow = [\"Bash\"]\n"})
	want := f.project + `: ignored until you trust this workspace: agent.subagent_ask, permissions.allow (run "reasonix trust" to trust it`
	if got := c.UntrustedNotice(); !strings.HasPrefix(got, want) || strings.Contains(got, "\n") {
		t.Errorf("notice = %q, want it to start %q", got, want)
	}
	// The notice replaces per-key warnings.
	wantWarnings(t, c.Warnings)

	for _, l := range []layout{
		{user: trustUser, project: "[agent]\nsubagent_ask = \"allow\"\n", trusted: true},
		{user: trustUser, project: "[agent]\ntemperature = 1.0\n"},
		{user: trustUser},
	} {
		if c, _ := mustLoad(t, l); c.UntrustedNotice() != "" || c.Untrusted != nil {
			t.Errorf("%+v: notice %q, untrusted %q", l, c.UntrustedNotice(), c.Untrusted)
		}
	}
}

// TestLoadExplicitFileIsTrusted: a --config file, even the project's own
// reasonix.toml, is the user's and keeps everything while the workspace is
// untrusted.
func TestLoadExplicitFileIsTrusted(t *testing.T) {
	t.Parallel()
	const text = "[permissions]\nallow = [\"Bash(make:*)\"]\n[[plugins]]\nname = \"p\"\ncommand = \"p-server\"\n"
	for _, l := range []layout{{user: trustUser, explicit: text}, {user: trustUser, project: text}} {
		f, opts := writeLayout(t, l)
		opts.File = f.explicit
		if l.project != "" {
			opts.File = f.project
		}
		c, err := Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Permissions.Allow, []string{"Bash(make:*)"}) || len(c.Plugins) != 1 || c.Untrusted != nil || c.ProjectTrusted {
			t.Errorf("allow %q plugins %d untrusted %q trusted %v", c.Permissions.Allow, len(c.Plugins), c.Untrusted, c.ProjectTrusted)
		}
	}
}

func TestLoadRuleUnions(t *testing.T) {
	t.Parallel()
	const user = "[permissions]\ndeny = [\"Bash(rm:*)\"]\nask = [\"Bash(git push:*)\"]\n"
	tests := []struct {
		name      string
		layout    layout
		deny, ask []string
		// sources names the layers Sources lists for deny, as "user",
		// "project" and "explicit".
		sources []string
	}{
		{"empty project lists remove nothing", layout{user: user, project: "[permissions]\ndeny = []\nask = []\n"},
			[]string{"Bash(rm:*)"}, []string{"Bash(git push:*)"}, []string{"user"}},
		{"trusted empty lists remove nothing", layout{user: user, project: "[permissions]\ndeny = []\nask = []\n", trusted: true},
			[]string{"Bash(rm:*)"}, []string{"Bash(git push:*)"}, []string{"user"}},
		{"explicit empty lists remove nothing", layout{user: user, explicit: "[permissions]\ndeny = []\nask = []\n"},
			[]string{"Bash(rm:*)"}, []string{"Bash(git push:*)"}, []string{"user"}},
		{"untrusted project adds", layout{user: user, project: "[permissions]\ndeny = [\"Bash(curl:*)\"]\nask = [\"Edit(**)\"]\n"},
			[]string{"Bash(rm:*)", "Bash(curl:*)"}, []string{"Bash(git push:*)", "Edit(**)"}, []string{"user", "project"}},
		{"every layer adds once", layout{user: user, project: "[permissions]\ndeny = [\"Bash(rm:*)\", \"Read(.env)\"]\n", explicit: "[permissions]\ndeny = [\"Read(.env)\", \"Bash(dd:*)\"]\n"},
			[]string{"Bash(rm:*)", "Read(.env)", "Bash(dd:*)"}, []string{"Bash(git push:*)"}, []string{"user", "project", "explicit"}},
		{"a repeat adds no source", layout{user: user, project: "[permissions]\ndeny = [\"Bash(rm:*)\"]\n"},
			[]string{"Bash(rm:*)"}, []string{"Bash(git push:*)"}, []string{"user"}},
		{"project alone", layout{project: "[permissions]\ndeny = [\"Bash(rm:*)\"]\n"},
			[]string{"Bash(rm:*)"}, nil, []string{"project"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, f := mustLoad(t, tt.layout)
			if !slices.Equal(c.Permissions.Deny, tt.deny) || !slices.Equal(c.Permissions.Ask, tt.ask) {
				t.Errorf("deny %q ask %q, want %q %q", c.Permissions.Deny, c.Permissions.Ask, tt.deny, tt.ask)
			}
			files := map[string]string{"user": f.user, "project": f.project, "explicit": f.explicit}
			var want []string
			for _, s := range tt.sources {
				want = append(want, files[s])
			}
			if got := c.Sources["permissions.deny"]; got != strings.Join(want, ", ") {
				t.Errorf("deny source = %q, want %q", got, strings.Join(want, ", "))
			}
			if slices.Contains(c.Untrusted, "permissions.deny") || slices.Contains(c.Untrusted, "permissions.ask") {
				t.Errorf("rules that only tighten were held back: %q", c.Untrusted)
			}
		})
	}
}

// TestLoadUntrustedUnknownValueIsReported: a value the strictness ranks do
// not know is not quietly dropped as a loosening; validation names it.
func TestLoadUntrustedUnknownValueIsReported(t *testing.T) {
	t.Parallel()
	f, opts := writeLayout(t, layout{
		user:    trustUserWith("[permissions]\nmode = \"deny\"\n") + "\n[agent]\nsubagent_ask = \"deny\"\n",
		project: "[permissions]\nmode = \"maybe\"\n[agent]\nsubagent_ask = \"sometimes\"\n",
	})
	_, err := Load(opts)
	for _, w := range []string{f.project + ": permissions.mode", f.project + ": agent.subagent_ask"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not name %q", err, w)
		}
	}
}
