package main

import (
	"github.com/spf13/cobra"
)

// WorkersOptions are the inputs of `reasonix workers`.
type WorkersOptions struct {
	globalOptions
}

// NewCmdWorkers builds `reasonix workers`. runF replaces the action in tests.
func NewCmdWorkers(f *Factory, runF func(*WorkersOptions) error) *cobra.Command {
	opts := &WorkersOptions{}
	cmd := &cobra.Command{
		Use:    "workers",
		Short:  "List the configured workers, their state and load",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return nil
		},
	}
	return cmd
}
