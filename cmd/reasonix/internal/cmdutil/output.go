package cmdutil

import (
	"encoding/json"
	"fmt"
	"time"
)

// ForceKillTimeout bounds how long a second interrupt waits for the killed
// process groups to be reaped before the command returns anyway.
const ForceKillTimeout = time.Second

// WriteJSON prints v as indented JSON on stdout.
func WriteJSON(f *Factory, v any) error {
	enc := json.NewEncoder(f.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
