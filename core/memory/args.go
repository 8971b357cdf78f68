package memory

import (
	"fmt"
)

// required is the error for a missing argument.
func required(tool, arg, what string) error {
	return fmt.Errorf("%s: %q is required: %s", tool, arg, what)
}
