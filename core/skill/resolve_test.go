package skill

import (
	"testing"

	"reasonix/core/config"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	withFront := Profile{Skill: Skill{Name: "review", Model: "front/model", Effort: "front-effort"}}
	bare := Profile{Skill: Skill{Name: "review"}}
	full := config.Agent{
		SubagentModels:  map[string]string{"review": "per/profile", "other": "other/model"},
		SubagentEfforts: map[string]string{"review": "per-effort", "other": "other-effort"},
		SubagentModel:   "default/subagent",
		SubagentEffort:  "default-effort",
	}
	defaultsOnly := config.Agent{SubagentModel: "default/subagent", SubagentEffort: "default-effort"}
	otherOnly := config.Agent{
		SubagentModels:  map[string]string{"other": "other/model"},
		SubagentEfforts: map[string]string{"other": "other-effort"},
	}
	tests := []struct {
		name                  string
		profile               Profile
		callModel, callEffort string
		agent                 config.Agent
		wantModel, wantEffort string
	}{
		{"per-profile config beats everything", withFront, "call/model", "call-effort", full, "per/profile", "per-effort"},
		{"call beats frontmatter and defaults", withFront, "call/model", "call-effort", defaultsOnly, "call/model", "call-effort"},
		{"frontmatter beats subagent defaults", withFront, "", "", defaultsOnly, "front/model", "front-effort"},
		{"subagent defaults", bare, "", "", defaultsOnly, "default/subagent", "default-effort"},
		{"nothing set means the executor default", bare, "", "", config.Agent{}, "", ""},
		{"another profile's entry does not apply", bare, "", "", otherOnly, "", ""},
		{"model and effort resolve independently", withFront, "call/model", "", config.Agent{SubagentEfforts: map[string]string{"review": "per-effort"}}, "call/model", "per-effort"},
		{"blank values are skipped", Profile{Skill: Skill{Name: "review", Model: "  "}}, " ", "", config.Agent{SubagentModels: map[string]string{"review": " "}, SubagentModel: "default/subagent"}, "default/subagent", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model, effort := Resolve(tt.profile, tt.callModel, tt.callEffort, tt.agent)
			if model != tt.wantModel || effort != tt.wantEffort {
				t.Errorf("Resolve = (%q, %q), want (%q, %q)", model, effort, tt.wantModel, tt.wantEffort)
			}
		})
	}
}
