package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// ErrClosed is returned by a Transport or Client used after Close.
var ErrClosed = errors.New("mcp connection closed")

// ErrSSEDeferred is returned for a server configured with type "sse", the
// legacy HTTP+SSE transport, which this client does not implement.
var ErrSSEDeferred = errors.New(`the legacy HTTP+SSE transport (type "sse") is not supported yet; use type "http" (streamable HTTP) if the server offers it`)

// Transport carries JSON-RPC messages to and from one server. The MCP logic
// is written once, in Client, over this interface.
type Transport interface {
	// Send delivers one message. ctx bounds the delivery only: a reply
	// arrives later through Receive.
	Send(ctx context.Context, msg Message) error
	// Receive returns the next message from the server. It returns
	// ErrClosed after Close, and the transport's failure (such as an
	// *ExitError) once the connection is lost. It is called from one
	// goroutine at a time.
	Receive(ctx context.Context) (Message, error)
	// Close ends the connection and releases everything the transport
	// started, waiting for it to stop. It is safe to call more than once.
	Close() error
}

// HandshakeObserver is implemented by transports that act on the outcome
// of the MCP handshake. Client calls Negotiated with the agreed protocol
// version before it sends notifications/initialized, and Initialized right
// after.
type HandshakeObserver interface {
	Negotiated(protocolVersion string)
	Initialized()
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
		t, err := StartStdio(ctx, StdioCommand{Command: cfg.Command, Args: cfg.Args, Env: cfg.Env, Dir: opts.Dir}, opts.Logger)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", cfg.Name, err)
		}
		return t, nil
	case TypeHTTP:
		t, err := NewHTTP(cfg.URL, HTTPOptions{Headers: cfg.Headers, Client: opts.HTTPClient, Logger: opts.Logger})
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
