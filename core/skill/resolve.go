package skill

import (
	"strings"

	"reasonix/core/config"
)

// Resolve picks the model reference and reasoning effort one run of the
// profile uses. Each is decided on its own, the first non-blank of:
//
//  1. agent.subagent_models / agent.subagent_efforts for the profile's name
//     (the user's standing choice for that profile beats everything);
//  2. the call's own model / effort (a flag, a task argument);
//  3. the profile's frontmatter;
//  4. agent.subagent_model / agent.subagent_effort.
//
// An empty result means the executor's default: default_model for the
// model, the provider's own default for the effort.
func Resolve(p Profile, callModel, callEffort string, agent config.Agent) (model, effort string) {
	model = first(agent.SubagentModels[p.Name], callModel, p.Model, agent.SubagentModel)
	effort = first(agent.SubagentEfforts[p.Name], callEffort, p.Effort, agent.SubagentEffort)
	return model, effort
}

func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
