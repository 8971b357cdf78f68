package mcp

import (
	"context"
	"encoding/json"
	"slices"
)

// FormDefaults collects the default of every property of an elicitation
// form's schema and lists, sorted, the required properties that have
// none. A schema that cannot be read yields nil content.
func FormDefaults(schema json.RawMessage) (content map[string]any, missing []string) {
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	content = map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	for _, name := range s.Required {
		if _, ok := content[name]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return content, missing
}

// AnswerWithDefaults is the headless answer to a form: accepted with the
// schema's defaults when every required field has one, else declined (as
// is a URL-mode request, which needs a person). It reports which required
// fields had no default.
func AnswerWithDefaults(req ElicitRequest) (ElicitResult, []string) {
	content, missing := FormDefaults(req.RequestedSchema)
	if req.Mode == "url" || len(missing) > 0 || content == nil {
		return ElicitResult{Action: ElicitDecline}, missing
	}
	return ElicitResult{Action: ElicitAccept, Content: content}, nil
}

// Decline is an Elicitor that declines every request.
func Decline(context.Context, ElicitRequest) (ElicitResult, error) {
	return ElicitResult{Action: ElicitDecline}, nil
}
