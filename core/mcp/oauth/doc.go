// Package oauth is the OAuth 2.1 client of remote MCP servers, built on
// the MCP Go SDK's handlers: discovery of the protected resource and its
// authorization server, client ID metadata documents, dynamic or
// pre-registered clients, PKCE, the resource parameter, scope selection
// and step-up, refresh tokens, and the client-credentials grant.
//
// What is ours is around it: how an authorization URL reaches a person
// (a browser with a loopback callback, a printed URL, or a fetch for
// servers that approve without one) and a per-server token store under
// the reasonix home, written with mode 0600, that refreshed tokens are
// saved to; the grants the SDK lacks, built on golang.org/x/oauth2 beside
// it: client credentials authenticated by a signed JWT (private_key_jwt,
// machine.go and assertion.go) and enterprise cross-app access (an ID
// token exchanged at the identity provider, then a JWT bearer grant); and
// Settings, a server entry's declared OAuth keys.
package oauth
