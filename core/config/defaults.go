package config

// builtinTOML is the lowest layer. It goes through the same decoder as the
// files, so every key it sets is recorded in Sources as "default".
const builtinTOML = `
[ui]
shortcut_layout = "desktop"
cursor_shape = "bar"

[agent]
temperature = 0.0
reasoning_language = "auto"
max_subagent_concurrency = 6
max_parallel_writers = 3
task_timeout_seconds = 1800
max_steps = 200
resume_running = "rerun"
background_wakeup = true
writer_isolation = "claims"
subagent_ask = "parent"
tool_result_snip_ratio = 0.6
compact_ratio = 0.8
compact_force_ratio = 0.9
plan_rounds = 3

[tools]
bash_timeout_seconds = 120
mcp_call_timeout_seconds = 300

[tools.shell]
prefer = "auto"

[permissions]
mode = "ask"

[sandbox]
bash = "enforce"
network = false

[serve]
addr = "127.0.0.1:8787"
auth_mode = "none"
behind_proxy = false

[environment]
enabled = true

[remote]
listen = "127.0.0.1:0"
heartbeat_ms = 1000
miss_limit = 3
run_local = true
`

// builtinProviderTOML is merged only when no layer declares a provider, so
// that a fresh install works with nothing but DEEPSEEK_API_KEY. It sets no
// default_model: an unset one falls back to the first provider, and one a
// file did set must not be overwritten.
const builtinProviderTOML = `
[[providers]]
name = "deepseek"
kind = "openai"
base_url = "https://api.deepseek.com"
models = ["deepseek-v4-flash", "deepseek-v4-pro"]
default = "deepseek-v4-flash"
api_key_env = "DEEPSEEK_API_KEY"
context_window = 1000000
`

// Per-entry defaults, applied to keys an entry leaves out.
const (
	defaultStallTimeoutSeconds = 120
	defaultMaxRetries          = 4
	defaultPluginType          = "stdio"
	defaultWorkerCapacity      = 4
)

// DefaultTOML is the config file `reasonix setup` writes to
// UserConfigPath: the DeepSeek provider plus the settings a user is most
// likely to change. It loads with no warnings.
const DefaultTOML = `# Reasonix user configuration.
# Every available key is described in reasonix.example.toml.

# Model used when --model is not given: a provider name, or provider/model.
default_model = "deepseek"

[agent]
max_subagent_concurrency = 6   # subagents running at once (1-64)
max_parallel_writers = 3       # of those, how many may write files (1-32)

[[providers]]
name = "deepseek"
kind = "openai"
base_url = "https://api.deepseek.com"
models = ["deepseek-v4-flash", "deepseek-v4-pro"]
default = "deepseek-v4-flash"
api_key_env = "DEEPSEEK_API_KEY"   # read from the environment, else from .env in this directory
context_window = 1000000           # tokens; 0 disables compaction

[permissions]
mode = "ask"   # what file writers and shell commands do when no rule matches: ask|allow|deny

[sandbox]
bash = "enforce"   # confine shell commands with the OS sandbox: enforce|off
`
