package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/atomicfile"
	"reasonix/core/config"
)

// SetupOptions are the inputs of `reasonix setup`.
type SetupOptions struct {
	// Force overwrites an existing user config.
	Force bool
	// Provider names the provider of the default config whose key
	// --api-key-stdin saves.
	Provider string
	// APIKeyStdin reads an API key from standard input and saves it to the
	// home .env file.
	APIKeyStdin bool
}

// NewCmdSetup builds `reasonix setup`. runF replaces the action in tests.
func NewCmdSetup(f *cmdutil.Factory, runF func(*SetupOptions) error) *cobra.Command {
	opts := &SetupOptions{}
	cmd := &cobra.Command{
		Use:   "setup [flags]",
		Short: "Write the default user config and optionally save an API key",
		Long: `Write the default configuration to the user config file in the Reasonix home
($REASONIX_HOME, else ~/.reasonix or %AppData%\reasonix), creating the directory.
An existing config is kept (run setup again to add a key) unless --force is
given. On a terminal, when the provider's key is set neither in the
environment nor in <home>/.env, setup asks for it (without echoing it).

With --api-key-stdin the first line of standard input is saved as the provider's
key (DEEPSEEK_API_KEY for deepseek) in <home>/.env, readable only by you. Other
lines of that file are kept.`,
		Example: `  reasonix setup
  printf '%s\n' "$KEY" | reasonix setup --api-key-stdin`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSetup(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Force, "force", false, "overwrite an existing user config")
	fl.StringVar(&opts.Provider, "provider", "deepseek", "provider whose API key --api-key-stdin saves")
	fl.BoolVar(&opts.APIKeyStdin, "api-key-stdin", false, "read the API key from the first line of stdin and save it to <home>/.env")
	return cmd
}

func runSetup(f *cmdutil.Factory, opts *SetupOptions) error {
	home, err := f.Home()
	if err != nil {
		return err
	}
	prov, err := defaultProvider(opts.Provider)
	if err != nil {
		return err
	}
	// Everything that can be refused is checked before anything is
	// written, so a failed setup leaves the home as it was.
	var key string
	if opts.APIKeyStdin {
		if prov.APIKeyEnv == "" {
			return cmdutil.UsageErrorf("--api-key-stdin: provider %q needs no API key", prov.Name)
		}
		if key, err = readAPIKey(f, prov.APIKeyEnv); err != nil {
			return err
		}
	}
	cfgPath := config.UserConfigPath(home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create reasonix home: %w", err)
	}
	switch err := writeConfigFile(cfgPath, []byte(config.DefaultTOML), opts.Force); {
	case errors.Is(err, fs.ErrExist):
		// Setup is run again to add a key, or to check: the user's config
		// stays as it is.
		fmt.Fprintf(f.Stdout, "Kept your config at %s (--force replaces it with the default config).\n", cfgPath)
	case err != nil:
		return err
	default:
		fmt.Fprintf(f.Stdout, "Wrote the default config to %s (model %s/%s).\n", cfgPath, prov.Name, prov.DefaultModel())
	}

	envPath := config.DotEnvPath(home)
	if key == "" && prov.APIKeyEnv != "" && !keyKnown(f, envPath, prov.APIKeyEnv) {
		if key, err = askAPIKey(f, prov.APIKeyEnv); err != nil {
			return err
		}
	}
	switch {
	case key != "":
		if err := config.SaveAPIKey(home, prov.APIKeyEnv, key); err != nil {
			return err
		}
		fmt.Fprintf(f.Stdout, "Saved %s to %s (readable only by you).\n", prov.APIKeyEnv, envPath)
	case prov.APIKeyEnv != "" && f.Env(prov.APIKeyEnv) == "":
		fmt.Fprintf(f.Stdout, "%s is not set: export it, or add %s=<key> to %s.\n", prov.APIKeyEnv, prov.APIKeyEnv, envPath)
	}
	fmt.Fprintln(f.Stdout, "Next: run `reasonix doctor` to check the setup.")
	return nil
}

// keyKnown reports whether the key is set in the environment or in the
// home's .env file already.
func keyKnown(f *cmdutil.Factory, envPath, name string) bool {
	if f.Env(name) != "" {
		return true
	}
	vals, err := config.ReadDotEnv(envPath)
	return err == nil && vals[name] != ""
}

// askAPIKey asks for the key on the terminal, without echoing it, when
// standard input is one; "" when it is not or the user pressed Enter.
func askAPIKey(f *cmdutil.Factory, name string) (string, error) {
	in, ok := f.Stdin.(*os.File)
	if !ok || !term.IsTerminal(in.Fd()) {
		return "", nil
	}
	fmt.Fprintf(f.Stderr, "Paste your %s (it is not shown; Enter skips): ", name)
	b, err := term.ReadPassword(in.Fd())
	fmt.Fprintln(f.Stderr)
	if err != nil {
		return "", fmt.Errorf("read api key: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", nil
	}
	if badKey(key) {
		return "", cmdutil.UsageErrorf("the key contains a space, control character, quote or backslash; paste the key alone")
	}
	return key, nil
}

// badKey reports a key the .env reader would not give back unchanged.
func badKey(key string) bool {
	return strings.IndexFunc(key, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '"' || r == '\'' || r == '\\'
	}) >= 0
}

// defaultProvider returns the provider called name from config.DefaultTOML,
// which is what setup writes, so the key is saved under the variable the
// written config reads.
func defaultProvider(name string) (config.ProviderConfig, error) {
	var def config.Config
	if _, err := toml.Decode(config.DefaultTOML, &def); err != nil {
		return config.ProviderConfig{}, fmt.Errorf("default config: %w", err)
	}
	names := make([]string, 0, len(def.Providers))
	for _, p := range def.Providers {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return config.ProviderConfig{}, cmdutil.UsageErrorf("--provider %q: the default config offers %s", name, strings.Join(names, ", "))
}

// readAPIKey reads the key from the first line of stdin. A key that the
// .env reader would not give back unchanged is refused rather than mangled.
func readAPIKey(f *cmdutil.Factory, name string) (string, error) {
	if file, ok := f.Stdin.(*os.File); ok {
		if st, err := file.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(f.Stderr, "Paste %s and press Enter: ", name)
		}
	}
	line, err := bufio.NewReader(f.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read api key from stdin: %w", err)
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", cmdutil.UsageErrorf("--api-key-stdin: no key on stdin")
	}
	if badKey(key) {
		return "", cmdutil.UsageErrorf("--api-key-stdin: the key contains a space, control character, quote or backslash; pass the key alone")
	}
	return key, nil
}

// writeConfigFile writes data to path. Without force the file must not
// exist, which O_EXCL guarantees even against a concurrent setup; with
// force the file is replaced atomically so a crash never leaves half a
// config behind.
func writeConfigFile(path string, data []byte, force bool) error {
	if force {
		if err := atomicfile.Write(path, data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	}
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if _, err := file.Write(data); err != nil {
		_ = file.Close()
		return fmt.Errorf("write config %s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("write config %s: %w", path, err)
	}
	return nil
}
