package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxErrorBody bounds how much of a failed reply's body is kept for the
// error message.
const maxErrorBody = 512

// StatusError is an HTTP reply outside 2xx that ended the handshake.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Body is the start of the reply body, for the error message.
	Body string
}

// Error names the status and quotes the body.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("mcp server answered http %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// HTTPOptions configure an HTTP transport.
type HTTPOptions struct {
	// Headers are sent on every request, e.g. Authorization.
	Headers map[string]string
	// Client replaces the transport's own HTTP client.
	Client *http.Client
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// MaxReconnects bounds consecutive reconnections of a broken event
	// stream; zero means the SDK's default (5).
	MaxReconnects int
	// OAuth, when set, authorizes requests and answers 401 and 403
	// insufficient_scope challenges (see package oauth).
	OAuth auth.OAuthHandler
}

// HTTP is the streamable HTTP transport, the SDK's client transport with
// our static headers, our error for a refused handshake, and the session
// id exposed. The SDK does the wire: JSON or event-stream replies, the
// session header, the standalone GET stream, resumption of a broken
// stream with Last-Event-ID after the server's retry delay, and DELETE on
// close.
type HTTP struct {
	url string
	st  *sdk.StreamableClientTransport
	rt  *headerTransport
	own *http.Transport // closed with the transport when ours

	mu     sync.Mutex
	conn   sdk.Connection
	closed bool
}

// NewHTTP returns a transport for the server at rawURL, which is used
// exactly as given for every request. It does no I/O.
func NewHTTP(rawURL string, opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp server url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp server url %q: want an absolute http or https url", rawURL)
	}
	h := &HTTP{url: rawURL}
	base := http.RoundTripper(nil)
	client := opts.Client
	if client != nil {
		base = client.Transport
	}
	if base == nil {
		if client == nil {
			h.own = http.DefaultTransport.(*http.Transport).Clone()
			base = h.own
		} else {
			base = http.DefaultTransport
		}
	}
	h.rt = &headerTransport{base: base, headers: make(http.Header)}
	for k, v := range opts.Headers {
		h.rt.headers.Set(k, v)
	}
	hc := &http.Client{Transport: h.rt}
	if client != nil {
		hc.Timeout, hc.Jar, hc.CheckRedirect = client.Timeout, client.Jar, client.CheckRedirect
	}
	h.st = &sdk.StreamableClientTransport{
		Endpoint:     rawURL,
		HTTPClient:   hc,
		MaxRetries:   opts.MaxReconnects,
		OAuthHandler: opts.OAuth,
	}
	return h, nil
}

// Connect implements the SDK's Transport. A transport connects once.
func (h *HTTP) Connect(ctx context.Context) (sdk.Connection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if h.conn != nil {
		return nil, errors.New("mcp http transport already connected")
	}
	c, err := h.st.Connect(ctx)
	if err != nil {
		return nil, h.explain(err)
	}
	h.conn = c
	return c, nil
}

// SessionID is the session id the server assigned, or "".
func (h *HTTP) SessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil {
		return ""
	}
	return h.conn.SessionID()
}

// explain adds the HTTP status that refused the handshake, when there was
// one, to err.
func (h *HTTP) explain(err error) error {
	if se := h.rt.refusal(); se != nil && !errors.As(err, new(*StatusError)) {
		return fmt.Errorf("%w: %w", se, err)
	}
	return err
}

// observeProgress makes fn see the params of every progress notification
// as the SDK reads it from an event stream, so that it runs before any
// response that follows on the same stream.
func (h *HTTP) observeProgress(fn func(params json.RawMessage)) {
	h.rt.mu.Lock()
	h.rt.onProgress = fn
	h.rt.mu.Unlock()
}

// Close ends the session (the SDK sends DELETE) and releases idle
// connections of a private HTTP client. It is safe to call more than once.
func (h *HTTP) Close() error {
	h.mu.Lock()
	conn := h.conn
	already := h.closed
	h.closed = true
	h.mu.Unlock()
	if already {
		return nil
	}
	var err error
	if conn != nil {
		err = conn.Close()
	}
	if h.own != nil {
		h.own.CloseIdleConnections()
	}
	return err
}

// headerTransport adds the configured headers to every request and
// remembers the first refusal (a status outside 2xx other than the ones
// the protocol expects) so a failed handshake can say what the server
// answered.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header

	mu         sync.Mutex
	refused    *StatusError
	onProgress func(params json.RawMessage)
}

// RoundTrip implements http.RoundTripper.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	t.mu.Lock()
	onProgress := t.onProgress
	t.mu.Unlock()
	if onProgress != nil && resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &progressTap{ReadCloser: resp.Body, deliver: onProgress}
	}
	if req.Method != http.MethodPost {
		return resp, nil
	}
	switch {
	case resp.StatusCode < 400, resp.StatusCode == http.StatusUnauthorized:
		// 401 is the OAuth handler's to answer.
		return resp, nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	t.mu.Lock()
	if t.refused == nil {
		t.refused = &StatusError{StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	t.mu.Unlock()
	return resp, nil
}

func (t *headerTransport) refusal() *StatusError {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused
}

// progressTap watches an event stream as the SDK reads it and hands the
// params of each progress notification to deliver, in stream order. It
// changes nothing the SDK reads.
type progressTap struct {
	io.ReadCloser
	deliver func(params json.RawMessage)
	line    []byte // the unfinished line
	data    []byte // the data lines of the current event
}

// maxTapEvent bounds what the tap buffers of one event; larger events are
// not progress notifications and are skipped.
const maxTapEvent = 1 << 20

// Read implements io.Reader.
func (p *progressTap) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	chunk := b[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if len(p.line) < maxTapEvent {
				p.line = append(p.line, chunk...)
			}
			break
		}
		p.line = append(p.line, chunk[:i]...)
		chunk = chunk[i+1:]
		p.endLine(bytes.TrimSuffix(p.line, []byte("\r")))
		p.line = p.line[:0]
	}
	return n, err
}

func (p *progressTap) endLine(line []byte) {
	switch {
	case len(line) == 0:
		p.endEvent()
	case bytes.HasPrefix(line, []byte("data:")):
		d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
		if len(p.data)+len(d) < maxTapEvent {
			if len(p.data) > 0 {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, d...)
		}
	}
}

func (p *progressTap) endEvent() {
	data := p.data
	p.data = p.data[:0]
	if !bytes.Contains(data, []byte("notifications/progress")) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &m) == nil && m.ID == nil && m.Method == "notifications/progress" {
		p.deliver(m.Params)
	}
}
