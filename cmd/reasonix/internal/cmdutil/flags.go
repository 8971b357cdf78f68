package cmdutil

import (
	"net"
	"strings"

	"github.com/spf13/cobra"
)

// AddGlobalFlags adds --config and --cwd, the flags of every command that
// reads configuration.
func AddGlobalFlags(cmd *cobra.Command, g *GlobalOptions) {
	cmd.Flags().StringVar(&g.ConfigFile, "config", "", "config file with the highest precedence")
	cmd.Flags().StringVar(&g.Cwd, "cwd", "", "work in this directory (default: the current one)")
}

// IsLoopback reports whether host names this machine only. Any other name
// may resolve to an address others reach, so it counts as public.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
