package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrClosed is returned by a Transport or Client used after Close.
var ErrClosed = errors.New("mcp connection closed")

// ErrSSEDeferred is returned for a server configured with type "sse", the
// legacy HTTP+SSE transport, which this client does not implement.
var ErrSSEDeferred = errors.New(`the legacy HTTP+SSE transport (type "sse") is not supported yet; use type "http" (streamable HTTP) if the server offers it`)

// Transport is one way of reaching a server: an SDK transport that
// Connect hands to the SDK client, and that owns what it started (a
// process, idle HTTP connections) until Close. Stdio and HTTP are the two.
type Transport interface {
	sdk.Transport
	// Close ends the connection and releases everything the transport
	// started, waiting for it to stop. It is safe to call more than once.
	Close() error
}

// OpenOptions are the local settings Open needs beside the ServerConfig.
type OpenOptions struct {
	// Logger receives a stdio server's stderr and transport diagnostics;
	// nil discards them.
	Logger *slog.Logger
	// Dir is the working directory of a stdio server; empty means the
	// current one.
	Dir string
	// HTTPClient replaces the client of an http transport; nil uses a
	// private one.
	HTTPClient *http.Client
	// OAuth authorizes an http transport's requests; nil sends none but
	// the configured headers.
	OAuth auth.OAuthHandler
	// Wrap, when set, rewrites a stdio server's command line before it
	// starts (the sandbox uses it to run the server inside the jail).
	Wrap func(StdioCommand) (StdioCommand, error)
}

// Open starts or prepares the transport cfg describes. cfg must already be
// expanded (see ServerConfig.Expanded). For a stdio server, ctx governs the
// process: cancelling it kills the server as Close does. An http transport
// does no I/O until the first Send.
func Open(ctx context.Context, cfg ServerConfig, opts OpenOptions) (Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Type {
	case TypeStdio:
		cmd := StdioCommand{Command: cfg.Command, Args: cfg.Args, Env: cfg.Env, Dir: opts.Dir}
		if opts.Wrap != nil {
			w, err := opts.Wrap(cmd)
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: %w", cfg.Name, err)
			}
			cmd = w
		}
		t, err := StartStdio(ctx, cmd, opts.Logger)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", cfg.Name, err)
		}
		return t, nil
	case TypeHTTP:
		t, err := NewHTTP(cfg.URL, HTTPOptions{Headers: cfg.Headers, Client: opts.HTTPClient, Logger: opts.Logger, OAuth: opts.OAuth})
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", cfg.Name, err)
		}
		return t, nil
	case TypeSSE:
		return nil, fmt.Errorf("mcp server %q: %w", cfg.Name, ErrSSEDeferred)
	}
	return nil, fmt.Errorf("mcp server %q: unknown transport type %q", cfg.Name, cfg.Type)
}

// logger returns l, or a logger that discards everything.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
