package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// decodeArgs unmarshals a tool call's raw JSON arguments into v, a pointer
// to a struct of string fields, with errors the model can act on (`remember:
// "name" must be a string, got number`) rather than Go decoding messages.
// Like the file tools, it accepts empty or null arguments as {} and unwraps
// arguments sent as a JSON string once, which some models do; unknown
// fields are ignored.
func decodeArgs(name string, raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err == nil {
			raw = bytes.TrimSpace([]byte(inner))
		}
	}
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("%s: arguments must be a JSON object", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: %q must be a string, got %s", name, te.Field, te.Value)
		}
		return fmt.Errorf("%s: arguments are not valid JSON: %w", name, err)
	}
	return nil
}

// required is the error for a missing argument.
func required(tool, arg, what string) error {
	return fmt.Errorf("%s: %q is required: %s", tool, arg, what)
}
