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
	cmd.Flags().StringVar(&o.OAuthAuthorize, "oauth-authorize", oauth.AuthorizeBrowser,
		"when the server wants a login: browser (open it, take the code on a loopback callback), print (print the URL), or fetch (fetch the URL and take the code from the redirect, for servers that approve without a person)")
	cmd.Flags().StringVar(&o.OAuthClientID, "oauth-client-id", "", "a client pre-registered with the authorization server (overrides oauth_client_id)")
	cmd.Flags().StringVar(&o.OAuthClientSecretEnv, "oauth-client-secret-env", "", "the environment variable holding that client's secret (overrides oauth_client_secret_env)")
	cmd.Flags().StringVar(&o.OAuthClientMetadataURL, "oauth-client-metadata-url", "", "an https URL where this client's ID metadata document is published (overrides oauth_client_metadata_url)")
	cmd.Flags().StringVar(&o.OAuthGrant, "oauth-grant", "", "authorization_code (a person approves) or client_credentials (a machine client; needs --oauth-client-id) (overrides oauth_grant)")
}

// checkMCPFlags rejects bad values of the elicitation and OAuth flags.
func checkMCPFlags(o *MCPOptions) error {
	if o.Elicitation != "" && !slices.Contains(McpElicitations, o.Elicitation) {
		return cmdutil.UsageErrorf("--mcp-elicitation %q: want one of %s", o.Elicitation, strings.Join(McpElicitations, ", "))
	}
	if o.OAuthAuthorize != "" && !slices.Contains(oauth.Modes, o.OAuthAuthorize) {
		return cmdutil.UsageErrorf("--oauth-authorize %q: want one of %s", o.OAuthAuthorize, strings.Join(oauth.Modes, ", "))
	}
	if o.OAuthClientSecretEnv != "" && o.OAuthClientID == "" && o.URL != "" {
		return cmdutil.UsageErrorf("--oauth-client-secret-env needs --oauth-client-id")
	}
	switch o.OAuthGrant {
	case "", "authorization_code":
	case mcp.OAuthClientCredentials:
		if o.OAuthClientID == "" || o.OAuthClientSecretEnv == "" {
			return cmdutil.UsageErrorf("--oauth-grant client_credentials needs --oauth-client-id and --oauth-client-secret-env")
		}
	default:
		return cmdutil.UsageErrorf("--oauth-grant %q: want authorization_code or client_credentials", o.OAuthGrant)
	}
	return nil
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
// start one) in the mode o gives.
func (m *mcpContext) oauthHandler(f *cmdutil.Factory, c mcp.ServerConfig, o *MCPOptions) (*oauth.Handler, error) {
	cfg := oauth.Config{
		Server:            tokenKey(o, c),
		URL:               c.URL,
		Store:             oauth.NewStore(m.cfg.Home),
		Authorize:         oauth.AuthorizeNever,
		ClientID:          c.OAuthClientID,
		ClientMetadataURL: c.OAuthClientMetadataURL,
		ClientCredentials: c.OAuthGrant == mcp.OAuthClientCredentials,
		Out:               f.Stderr,
	}
	secretEnv := c.OAuthClientSecretEnv
	if o != nil {
		cfg.Authorize = o.OAuthAuthorize
		if o.OAuthClientID != "" {
			cfg.ClientID = o.OAuthClientID
			secretEnv = o.OAuthClientSecretEnv
		}
		if o.OAuthClientMetadataURL != "" {
			cfg.ClientMetadataURL = o.OAuthClientMetadataURL
		}
		if o.OAuthGrant != "" {
			cfg.ClientCredentials = o.OAuthGrant == mcp.OAuthClientCredentials
		}
	}
	if secretEnv != "" {
		cfg.ClientSecret = f.Env(secretEnv)
		if cfg.ClientSecret == "" {
			return nil, cmdutil.UsageErrorf("mcp server %q: the OAuth client secret variable %s is not set", c.Name, secretEnv)
		}
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
