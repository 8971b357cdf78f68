package providertest

// ConfigText is a user config that makes the fake at url the default
// provider, named "fake" and offering fake-model and other-model, with no
// API key, the bash sandbox off and no environment probe, so a test's
// session builds the same on every machine. extra is appended (more
// tables, or keys of the last one).
func ConfigText(url, extra string) string {
	return `default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = "` + url + `"
models = ["fake-model", "other-model"]
api_key_env = ""

[sandbox]
bash = "off"

[environment]
enabled = false
` + extra
}
