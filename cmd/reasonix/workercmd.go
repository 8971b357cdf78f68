package main

import (
	"github.com/spf13/cobra"
)

// WorkerOptions are the inputs of `reasonix worker`.
type WorkerOptions struct {
	globalOptions
}

// NewCmdWorker builds `reasonix worker`. runF replaces the action in tests.
func NewCmdWorker(f *Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{}
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Host subagents for schedulers on other machines",
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
