package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
)

// ConfigShowOptions are the inputs of `reasonix config show`.
type ConfigShowOptions struct {
	cmdutil.GlobalOptions
}

// ConfigPathOptions are the inputs of `reasonix config path`.
type ConfigPathOptions struct {
	cmdutil.GlobalOptions
}

// NewCmdConfig builds `reasonix config`, the parent of the commands that
// inspect the configuration. It has no action of its own.
func NewCmdConfig(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the configuration",
		// Without RunE cobra would print help and succeed for a
		// mistyped subcommand; a typo is a usage error.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want show or path", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdConfigShow(f, nil), NewCmdConfigPath(f, nil))
	return cmd
}

// NewCmdConfigShow builds `reasonix config show`. runF replaces the action
// in tests.
func NewCmdConfigShow(f *cmdutil.Factory, runF func(*ConfigShowOptions) error) *cobra.Command {
	opts := &ConfigShowOptions{}
	cmd := &cobra.Command{
		Use:   "show [flags]",
		Short: "Print the effective configuration and where each value came from",
		Long: `Print the configuration in force for the working directory as TOML: built-in
defaults, the user config, the project reasonix.toml and --config merged. Each
key is followed by a comment naming the file that set it ("default" for a
built-in value). Secrets are replaced by ***. Ignored keys are reported on
stderr.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runConfigShow(f, opts)
		},
	}
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// NewCmdConfigPath builds `reasonix config path`. runF replaces the action
// in tests.
func NewCmdConfigPath(f *cmdutil.Factory, runF func(*ConfigPathOptions) error) *cobra.Command {
	opts := &ConfigPathOptions{}
	cmd := &cobra.Command{
		Use:   "path [flags]",
		Short: "Print where the configuration files live and which exist",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runConfigPath(f, opts)
		},
	}
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

func runConfigShow(f *cmdutil.Factory, opts *ConfigShowOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	out, err := cfg.Show()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(f.Stdout, out)
	return err
}

func runConfigPath(f *cmdutil.Factory, opts *ConfigPathOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	home, err := f.Home()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(f.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "home\t%s\t%s\n", home, fileState(home))
	user := config.UserConfigPath(home)
	fmt.Fprintf(tw, "user config\t%s\t%s\n", user, fileState(user))
	project := config.ProjectConfigPath(cwd)
	fmt.Fprintf(tw, "project config\t%s\t%s\n", project, fileState(project))
	if opts.ConfigFile != "" {
		fmt.Fprintf(tw, "--config\t%s\t%s\n", opts.ConfigFile, fileState(opts.ConfigFile))
	}
	env := config.DotEnvPath(home)
	fmt.Fprintf(tw, "api keys\t%s\t%s\n", env, fileState(env))
	return tw.Flush()
}

// fileState describes whether path exists, for listings.
func fileState(path string) string {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return "(exists)"
	case errors.Is(err, fs.ErrNotExist):
		return "(not found)"
	default:
		return fmt.Sprintf("(unreadable: %v)", err)
	}
}
