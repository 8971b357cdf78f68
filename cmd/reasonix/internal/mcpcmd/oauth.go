package mcpcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/mcpconn"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/mcp"
	"reasonix/core/mcp/oauth"
	"reasonix/core/text"
)

// loginPatience is how much longer than --timeout mcp login waits when a
// person approves in the browser.
const loginPatience = 5 * time.Minute

// addOAuthFlags adds the OAuth flags of mcp tools, call and login.
func addOAuthFlags(cmd *cobra.Command, o *MCPOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.OAuthAuthorize, "oauth-authorize", oauth.AuthorizeBrowser,
		"when the server wants a login: browser (open it, take the code on a loopback callback), print (print the URL), or fetch (fetch the URL and take the code from the redirect, for servers that approve without a person)")
	s := &o.OAuth
	fl.StringVar(&s.Grant, "oauth-grant", "", "authorization_code (a person approves), client_credentials (a machine client; needs --oauth-client-id and a secret or private key) or cross_app_access (an enterprise identity provider's ID token; needs --oauth-idp-*) (overrides oauth_grant)")
	fl.StringVar(&s.ClientID, "oauth-client-id", "", "a client pre-registered with the authorization server (overrides oauth_client_id)")
	fl.StringVar(&s.ClientSecretEnv, "oauth-client-secret-env", "", "the environment variable holding that client's secret (overrides oauth_client_secret_env)")
	fl.StringVar(&s.ClientMetadataURL, "oauth-client-metadata-url", "", "an https URL where this client's ID metadata document is published (overrides oauth_client_metadata_url)")
	fl.StringVar(&s.PrivateKeyFile, "oauth-private-key-file", "", "a PEM private key that signs the client's assertion (private_key_jwt) for client_credentials (overrides oauth_private_key_file)")
	fl.StringVar(&s.PrivateKeyEnv, "oauth-private-key-env", "", "the environment variable holding that PEM private key (overrides oauth_private_key_env)")
	fl.StringVar(&s.SigningAlgorithm, "oauth-signing-algorithm", "", "the assertion's algorithm, e.g. ES256 or RS256 (default: the key's) (overrides oauth_signing_algorithm)")
	fl.StringVar(&s.IDPIssuer, "oauth-idp-issuer", "", "the enterprise identity provider's issuer URL, for cross_app_access (overrides oauth_idp_issuer)")
	fl.StringVar(&s.IDPClientID, "oauth-idp-client-id", "", "this client's id at the identity provider (overrides oauth_idp_client_id)")
	fl.StringVar(&s.IDPClientSecretEnv, "oauth-idp-client-secret-env", "", "the environment variable holding its secret there, if it has one (overrides oauth_idp_client_secret_env)")
	fl.StringVar(&s.IDTokenEnv, "oauth-id-token-env", "", "the environment variable holding the user's ID token from the identity provider (overrides oauth_id_token_env)")
}

// checkMCPFlags rejects bad values of the elicitation and OAuth flags.
func checkMCPFlags(o *MCPOptions) error {
	if o.Elicitation != "" && !slices.Contains(McpElicitations, o.Elicitation) {
		return cmdutil.UsageErrorf("--mcp-elicitation %q: want one of %s", o.Elicitation, strings.Join(McpElicitations, ", "))
	}
	if o.OAuthAuthorize != "" && !slices.Contains(oauth.Modes, o.OAuthAuthorize) {
		return cmdutil.UsageErrorf("--oauth-authorize %q: want one of %s", o.OAuthAuthorize, strings.Join(oauth.Modes, ", "))
	}
	s := o.OAuth
	if s.ClientSecretEnv != "" && s.ClientID == "" && o.URL != "" {
		return cmdutil.UsageErrorf("--oauth-client-secret-env needs --oauth-client-id")
	}
	if s.IDPClientSecretEnv != "" && s.IDPClientID == "" {
		return cmdutil.UsageErrorf("--oauth-idp-client-secret-env needs --oauth-idp-client-id")
	}
	if s.Grant != "" && !slices.Contains(oauth.Grants, s.Grant) {
		return cmdutil.UsageErrorf("--oauth-grant %q: want one of %s", s.Grant, strings.Join(oauth.Grants, ", "))
	}
	if a := s.SigningAlgorithm; a != "" && !slices.Contains(oauth.SigningAlgorithms, a) {
		return cmdutil.UsageErrorf("--oauth-signing-algorithm %q: want one of %s", a, strings.Join(oauth.SigningAlgorithms, ", "))
	}
	// With --url the flags are the whole of the settings; a named
	// server's are checked once merged with its keys (oauthHandler).
	if err := s.Validate(); err != nil && o.URL != "" {
		return cmdutil.UsageErrorf("%s", flagNames(err.Error()))
	}
	return nil
}

// flagNames spells the settings' key names as this command's flags.
func flagNames(msg string) string {
	return strings.NewReplacer("client_id", "--oauth-client-id", "client_secret_env", "--oauth-client-secret-env",
		"private_key_file", "--oauth-private-key-file", "private_key_env", "--oauth-private-key-env",
		"signing_algorithm", "--oauth-signing-algorithm", "idp_issuer", "--oauth-idp-issuer",
		"idp_client_id", "--oauth-idp-client-id", "idp_client_secret_env", "--oauth-idp-client-secret-env", "id_token_env", "--oauth-id-token-env",
		"client_metadata_url", "--oauth-client-metadata-url", "grant ", "--oauth-grant ").Replace(msg)
}

// NewCmdMCPLogin builds `reasonix mcp login`.
func NewCmdMCPLogin(run func(string, *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	o := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "login <server> | --url URL",
		Short: "Authorize reasonix with a remote MCP server (OAuth) and store the token",
		Long: `Connect to a streamable HTTP server and, when it asks for an OAuth
authorization, run the flow: discover its authorization server, register (or
use a pre-registered client), open the authorization URL, and exchange the
code. The token is stored for the server under the reasonix home (mode 0600)
and refreshed silently afterwards; ` + "`reasonix mcp logout`" + ` forgets it.`,
		Args: func(cmd *cobra.Command, args []string) error { return serverArgs(o, args, 0) },
		RunE: func(cmd *cobra.Command, args []string) error { return run("login", o) },
	}
	return o, cmd
}

// NewCmdMCPLogout builds `reasonix mcp logout`.
func NewCmdMCPLogout(run func(string, *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	o := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "logout <server> | --url URL",
		Short: "Forget the OAuth token stored for an MCP server",
		Args:  func(cmd *cobra.Command, args []string) error { return serverArgs(o, args, 0) },
		RunE:  func(cmd *cobra.Command, args []string) error { return run("logout", o) },
	}
	return o, cmd
}

// tokenKey is the name a server's tokens are stored under: its name, or
// the URL itself for --url.
func tokenKey(o *MCPOptions, c mcp.ServerConfig) string {
	if o != nil && o.URL != "" {
		return o.URL
	}
	return c.Name
}

// oauthHandler builds the OAuth handler of an http server: stored tokens
// first; a flow, when the server asks, only with o (the commands that may
// start one) in the mode o gives, with o's flags over the server's keys.
func (m *mcpContext) oauthHandler(f *cmdutil.Factory, c mcp.ServerConfig, o *MCPOptions) (*oauth.Handler, error) {
	settings := c.OAuth
	if o != nil {
		settings = settings.Override(o.OAuth)
		if err := settings.Validate(); err != nil {
			return nil, cmdutil.UsageErrorf("mcp server %q: oauth: %s", c.Name, err)
		}
	}
	cfg, err := settings.Config(c.Name, c.URL, f.Env)
	if err != nil {
		return nil, cmdutil.UsageErrorf("%s", err)
	}
	cfg.Server = tokenKey(o, c)
	cfg.Store = oauth.NewStore(m.cfg.Home)
	cfg.Authorize = oauth.AuthorizeNever
	cfg.Out = f.Stderr
	if o != nil {
		cfg.Authorize = o.OAuthAuthorize
	}
	h, err := oauth.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", c.Name, err)
	}
	return h, nil
}

// cliElicitor answers a server's questions in mcp tools and call by the
// --mcp-elicitation policy, noting each on stderr.
func cliElicitor(f *cmdutil.Factory, server string, o *MCPOptions) mcp.Elicitor {
	policy := mcpconn.ElicitDecline
	if o != nil && o.Elicitation != "" {
		policy = o.Elicitation
	}
	return func(_ context.Context, req mcp.ElicitRequest) (mcp.ElicitResult, error) {
		q := text.OneLine(req.Message, 120)
		if policy == mcpconn.ElicitDefaults {
			res, missing := mcp.AnswerWithDefaults(req)
			if res.Action == mcp.ElicitAccept {
				fmt.Fprintf(f.Stderr, "reasonix: mcp server %q asked %q; answered with the form's defaults\n", server, q)
				return res, nil
			}
			fmt.Fprintf(f.Stderr, "reasonix: mcp server %q asked %q; declined: no defaults for %v\n", server, q, missing)
			return res, nil
		}
		fmt.Fprintf(f.Stderr, "reasonix: mcp server %q asked %q; declined (--mcp-elicitation defaults answers with the form's defaults)\n", server, q)
		return mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}
}

func runMCPLogin(f *cmdutil.Factory, o *MCPOptions) error {
	m, err := loadMCPContext(f, o)
	if err != nil {
		return err
	}
	defer m.close()
	c, err := m.target(f, o)
	if err != nil {
		return err
	}
	if c.Type != mcp.TypeHTTP {
		return cmdutil.UsageErrorf("mcp server %q is a %s server; only http servers log in", c.Name, c.Type)
	}
	// A person may take a while in the browser.
	timeout := o.Timeout
	if o.OAuthAuthorize != oauth.AuthorizeFetch {
		timeout += loginPatience
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client, err := m.dialMCP(ctx, f, c, o)
	if err != nil {
		return err
	}
	_ = client.Close()
	rec, err := oauth.NewStore(m.cfg.Home).Load(tokenKey(o, c), c.URL)
	if err != nil {
		return err
	}
	if rec == nil {
		if grant := c.OAuth.Override(o.OAuth).Grant; grant == oauth.GrantClientCredentials || grant == oauth.GrantCrossApp {
			// A machine grant asks nobody: its tokens are fetched again
			// at each start, so there is nothing to keep.
			fmt.Fprintf(f.Stdout, "mcp server %q: the %s grant works; its tokens are fetched when needed and not stored\n", c.Name, grant)
			return nil
		}
		fmt.Fprintf(f.Stdout, "mcp server %q did not ask for a login; nothing stored\n", c.Name)
		return nil
	}
	fmt.Fprintf(f.Stdout, "logged in to mcp server %q; token stored in %s\n", c.Name, oauth.NewStore(m.cfg.Home).Path(tokenKey(o, c)))
	return nil
}

func runMCPLogout(f *cmdutil.Factory, o *MCPOptions) error {
	m, err := loadMCPContext(f, o)
	if err != nil {
		return err
	}
	defer m.close()
	key := o.URL
	if key == "" {
		key = o.Server
	}
	gone, err := oauth.NewStore(m.cfg.Home).Delete(key)
	if err != nil {
		return err
	}
	if !gone {
		fmt.Fprintf(f.Stdout, "no OAuth token stored for %q\n", key)
		return nil
	}
	fmt.Fprintf(f.Stdout, "forgot the OAuth token of %q\n", key)
	return nil
}
