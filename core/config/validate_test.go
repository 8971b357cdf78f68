package config

import (
	"errors"
	"strings"
	"testing"
)

// okProvider is a valid provider other cases can extend.
const okProvider = `
[[providers]]
name = "p"
kind = "openai"
base_url = "http://127.0.0.1:1"
models = ["a", "b"]
`

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		// want are substrings of the one problem expected, after "<file>: ".
		want []string
	}{
		{"shortcut layout", "[ui]\nshortcut_layout = \"vim\"\n", []string{"ui.shortcut_layout", "classic, desktop"}},
		{"temperature", "[agent]\ntemperature = 2.5\n", []string{"agent.temperature", "0 to 2"}},
		{"reasoning language", "[agent]\nreasoning_language = \"fr\"\n", []string{"agent.reasoning_language", "auto, zh, en"}},
		{"concurrency zero", "[agent]\nmax_subagent_concurrency = 0\n", []string{"agent.max_subagent_concurrency", "1 to 64"}},
		{"concurrency too high", "[agent]\nmax_subagent_concurrency = 65\n", []string{"agent.max_subagent_concurrency", "1 to 64"}},
		{"writers too high", "[agent]\nmax_parallel_writers = 40\n", []string{"agent.max_parallel_writers", "1 to 32"}},
		{"task timeout", "[agent]\ntask_timeout_seconds = 0\n", []string{"agent.task_timeout_seconds", "above 0"}},
		{"negative ratio", "[agent]\ntool_result_snip_ratio = -0.1\n", []string{"agent.tool_result_snip_ratio", "above 0 and at most 1"}},
		{"ratio above one", "[agent]\ncompact_force_ratio = 1.5\n", []string{"agent.compact_force_ratio", "at most 1"}},
		{"ratio nan", "[agent]\ncompact_force_ratio = nan\n", []string{"agent.compact_force_ratio", "nan"}},
		{"snip above compact", "[agent]\ntool_result_snip_ratio = 0.85\n", []string{"agent.tool_result_snip_ratio", "snip <= compact <= force"}},
		{"compact above force", "[agent]\ncompact_ratio = 0.95\n", []string{"agent.compact_ratio", "snip <= compact <= force"}},
		{"unknown planner model", "[agent]\nplanner_model = \"nope\"\n", []string{"agent.planner_model", "unknown model", "deepseek/deepseek-v4-pro"}},
		{"unknown subagent model", "[agent]\nsubagent_models = { review = \"x/y\" }\n", []string{"agent.subagent_models.review", "unknown model"}},
		{"unknown default model", "default_model = \"gpt\"\n", []string{"default_model", "unknown model"}},
		{"unknown kind", strings.Replace(okProvider, `"openai"`, `"anthropic"`, 1), []string{"providers[p].kind", `"anthropic"`, "use one of openai"}},
		{"slash in name", strings.Replace(okProvider, `name = "p"`, `name = "a/b"`, 1), []string{"providers[\"a/b\"].name", "must not contain"}},
		{"missing url", strings.Replace(okProvider, "base_url = \"http://127.0.0.1:1\"\n", "", 1), []string{"providers[p].base_url", "missing"}},
		{"bad url", strings.Replace(okProvider, "http://127.0.0.1:1", "api.example.com", 1), []string{"providers[p].base_url", "http or https"}},
		{"bad chat url", okProvider + "chat_url = \"ftp://x\"\n", []string{"providers[p].chat_url", "http or https"}},
		{"model and models", okProvider + "model = \"c\"\n", []string{"providers[p].models", "not both"}},
		{"no model", strings.Replace(okProvider, "models = [\"a\", \"b\"]\n", "", 1), []string{"providers[p].models", "missing"}},
		{"default not in models", okProvider + "default = \"c\"\n", []string{"providers[p].default", "not one of models (a, b)"}},
		{"duplicate model", strings.Replace(okProvider, `["a", "b"]`, `["a", "a"]`, 1), []string{"providers[p].models", `"a" twice`}},
		{"key pasted into api_key_env", okProvider + "api_key_env = \"sk-12345\"\n", []string{"providers[p].api_key_env", "not the key itself"}},
		{"negative context window", okProvider + "context_window = -1\n", []string{"providers[p].context_window", "negative"}},
		{"override for unknown model", okProvider + "model_overrides = { z = { context_window = 5 } }\n", []string{"providers[p].model_overrides.z", "not offered"}},
		{"negative override", okProvider + "model_overrides = { a = { context_window = -5 } }\n", []string{"providers[p].model_overrides.a.context_window", "negative"}},
		{"stall timeout", okProvider + "stall_timeout_seconds = 0\n", []string{"providers[p].stall_timeout_seconds", "above 0"}},
		{"negative retries", okProvider + "max_retries = -1\n", []string{"providers[p].max_retries", "negative"}},
		{"empty tool name", "[tools]\nenabled = [\"\"]\n", []string{"tools.enabled", "empty tool name"}},
		{"negative bash timeout", "[tools]\nbash_timeout_seconds = -1\n", []string{"tools.bash_timeout_seconds", "negative"}},
		{"negative mcp timeout", "[tools]\nmcp_call_timeout_seconds = -1\n", []string{"tools.mcp_call_timeout_seconds", "negative"}},
		{"shell prefer", "[tools.shell]\nprefer = \"zsh\"\n", []string{"tools.shell.prefer", "auto, bash, powershell, pwsh"}},
		{"permission mode", "[permissions]\nmode = \"yolo\"\n", []string{"permissions.mode", "ask, allow, deny"}},
		{"sandbox bash", "[sandbox]\nbash = \"on\"\n", []string{"sandbox.bash", "enforce, off"}},
		{"serve addr", "[serve]\naddr = \"8787\"\n", []string{"serve.addr", "host:port"}},
		{"serve port", "[serve]\naddr = \"localhost:http\"\n", []string{"serve.addr", "port"}},
		{"serve auth", "[serve]\nauth_mode = \"basic\"\n", []string{"serve.auth_mode", "none, token, password"}},
		{"plugin type", "[[plugins]]\nname = \"x\"\ntype = \"ws\"\n", []string{"plugins[x].type", "stdio, http, sse"}},
		{"stdio without command", "[[plugins]]\nname = \"x\"\n", []string{"plugins[x].command", "missing"}},
		{"stdio with url", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\nurl = \"http://h\"\n", []string{"plugins[x].url", "only applies to http and sse"}},
		{"http without url", "[[plugins]]\nname = \"x\"\ntype = \"http\"\n", []string{"plugins[x].url", "missing"}},
		{"sse without url", "[[plugins]]\nname = \"x\"\ntype = \"sse\"\n", []string{"plugins[x].url", "missing"}},
		{"http with command", "[[plugins]]\nname = \"x\"\ntype = \"http\"\nurl = \"http://h\"\ncommand = \"c\"\n", []string{"plugins[x].command", "only applies to stdio"}},
		{"plugin call timeout", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ncall_timeout_seconds = -2\n", []string{"plugins[x].call_timeout_seconds", "negative"}},
		{"plugin tool timeout", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ntool_timeout_seconds = { gen = -1 }\n", []string{"plugins[x].tool_timeout_seconds.gen", "negative"}},
		{"plugin approval", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ndefault_tools_approval_mode = \"never\"\n", []string{"plugins[x].default_tools_approval_mode", "auto, prompt, writes, approve"}},
		{"plugin tool approval", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ntools = { rm = { approval_mode = \"sure\" } }\n", []string{"plugins[x].tools.rm.approval_mode", "auto, prompt, writes, approve"}},
		{"plugin reviewer", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\napprovals_reviewer = \"bot\"\n", []string{"plugins[x].approvals_reviewer", "user, auto_review"}},
		{"environment tool path", "[environment.tools]\ngo = \"\"\n", []string{"environment.tools.go", "empty"}},
		{"both prompt forms in one file", "[agent]\nsystem_prompt = \"x\"\nsystem_prompt_file = \"y\"\n", []string{"agent.system_prompt_file", "keep one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, opts := writeLayout(t, layout{user: tt.text})
			_, err := Load(opts)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Load error = %v, want a ValidationError", err)
			}
			if len(ve.Problems) != 1 {
				t.Fatalf("problems = %q, want exactly one", ve.Problems)
			}
			got := ve.Problems[0]
			if !strings.HasPrefix(got, f.user+": ") {
				t.Errorf("problem %q does not start with the file %q", got, f.user)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("problem %q does not contain %q", got, w)
				}
			}
		})
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	t.Parallel()
	f, opts := writeLayout(t, layout{
		user:    "[agent]\nmax_parallel_writers = 0\n",
		project: "[permissions]\nmode = \"maybe\"\n[[plugins]]\nname = \"x\"\n",
		trusted: true,
	})
	_, err := Load(opts)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, w := range []string{
		f.user + ": agent.max_parallel_writers",
		f.project + ": permissions.mode",
		f.project + ": plugins[x].command",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestValidateKnownKinds(t *testing.T) {
	t.Parallel()
	text := strings.Replace(okProvider, `"openai"`, `"custom"`, 1)
	tests := []struct {
		name  string
		kinds []string
		ok    bool
	}{
		{"listed kind accepted", []string{"custom", "openai"}, true},
		{"unlisted kind refused", []string{"openai"}, false},
		{"no kinds registered accepts only openai", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, opts := writeLayout(t, layout{user: text})
			opts.KnownKinds = tt.kinds
			_, err := Load(opts)
			if (err == nil) != tt.ok {
				t.Errorf("Load error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
