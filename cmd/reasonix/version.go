package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

// NewCmdVersion builds `reasonix version`. runF replaces the action in tests.
func NewCmdVersion(f *cmdutil.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF()
			}
			_, err := fmt.Fprintf(f.Stdout, "reasonix %s (%s, %s/%s)\n", f.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
