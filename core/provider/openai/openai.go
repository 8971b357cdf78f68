package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"reasonix/core/panics"
	"reasonix/core/provider"
)

// Kind is the provider kind this package registers.
const Kind = "openai"

func init() {
	provider.Register(Kind, func(cfg provider.Config) (provider.Provider, error) {
		return New(cfg)
	})
}

// chanBuffer lets the producer run a little ahead of a consumer that
// renders each delta, without holding more than a screenful in memory.
const chanBuffer = 32

// drainLimit and drainTimeout bound the read after [DONE] that lets the
// HTTP connection be reused; a server that keeps the body open after
// [DONE] costs at most drainTimeout.
const (
	drainLimit   = 64 << 10
	drainTimeout = time.Second
)

// defaultClient is used when the config brings none. It has no overall
// timeout: a stream may legitimately run for many minutes, and stalls are
// caught by the per-read stall timer instead. Its transport keeps enough
// idle connections per host for a whole fleet: with net/http's default of
// two, 64 subagents on one endpoint would open (and TLS-handshake) a new
// connection for almost every request.
var defaultClient = &http.Client{Transport: fleetTransport()}

func fleetTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 128
	return t
}

// Provider streams chat completions from one OpenAI-compatible endpoint.
// It is safe for concurrent use; each Stream is independent.
type Provider struct {
	name       string
	chatURL    string
	model      string
	apiKey     string
	client     *http.Client
	stall      time.Duration
	maxRetries int
	retryBase  time.Duration
	clk        clock
	gate       *gate
	lim        *provider.Limiter
	// keyID is the API key's fingerprint (provider.KeyFingerprint), by
	// which a worker borrows from its scheduler's window for the same key.
	keyID string
	// sendReasoning is false for endpoints that reject reasoning_content
	// in request messages.
	sendReasoning bool
	// prefix keys requests by their cacheable prefix, so that an answered
	// one marks it warm at the endpoint (provider.NoteAnswered).
	prefix provider.PrefixMemo
}

// New builds a Provider from cfg. The chat URL is cfg.ChatURL, or
// cfg.BaseURL (trailing slashes removed) + "/chat/completions"; it must be
// an absolute http or https URL.
func New(cfg provider.Config) (*Provider, error) {
	return newProvider(cfg, realClock, endpointGates)
}

func newProvider(cfg provider.Config, clk clock, gates *gateSet) (*Provider, error) {
	chatURL := cfg.ChatURL
	if chatURL == "" {
		if cfg.BaseURL == "" {
			return nil, errors.New("base_url or chat_url is required")
		}
		chatURL = strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"
	}
	if err := checkURL(chatURL); err != nil {
		return nil, fmt.Errorf("chat url: %w", err)
	}
	p := &Provider{
		name:          cfg.Name,
		chatURL:       chatURL,
		model:         cfg.Model,
		apiKey:        cfg.APIKey,
		client:        cfg.HTTPClient,
		stall:         cfg.StallTimeout,
		maxRetries:    cfg.MaxRetries,
		retryBase:     cfg.RetryBase,
		clk:           clk,
		gate:          gates.get(chatURL),
		lim:           provider.EndpointLimiter(chatURL, cfg.MaxInFlight),
		sendReasoning: !cfg.OmitReasoning,
		keyID:         provider.KeyFingerprint(cfg.APIKey),
	}
	p.lim.NoteKey(p.keyID)
	if p.client == nil {
		p.client = defaultClient
	}
	if p.stall <= 0 {
		p.stall = defaultStall
	}
	switch {
	case p.maxRetries == 0:
		p.maxRetries = defaultMaxRetries
	case p.maxRetries < 0:
		p.maxRetries = 0
	}
	if p.retryBase <= 0 {
		p.retryBase = defaultRetryBase
	}
	return p, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return nil
}

// Name is the configured instance name.
func (p *Provider) Name() string { return p.name }

// Endpoint is the chat URL, the key of the endpoint's shared limiter.
func (p *Provider) Endpoint() string { return p.chatURL }

// Stream sends req and returns the chunk channel once the endpoint has
// answered with 2xx headers. Failures before that, retries included, are
// returned as the error; see the package documentation for the stream
// contract.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (<-chan provider.Chunk, error) {
	body, err := encodeRequest(req, p.model, p.sendReasoning)
	if err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	resp, att, err := p.send(ctx, body)
	if err != nil {
		return nil, err
	}
	att.prefix, _ = p.prefix.Of(req)
	ch := make(chan provider.Chunk, chanBuffer)
	go p.pump(ctx, resp, att, ch)
	return ch, nil
}

// attempt is one HTTP exchange: its own context, cancelled with
// ErrStalled as the cause when the stall timer fires.
type attempt struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	stall  time.Duration
	// slot is the endpoint limiter's admission, released when the
	// exchange ends; ttfb is how long the headers took.
	slot *provider.Slot
	ttfb time.Duration
	// prefix is the request's prefix key (provider.PrefixOf).
	prefix string
}

func (a *attempt) stop() {
	a.timer.Stop()
	a.cancel(nil)
}

// admit waits for the endpoint's gate and then for a slot of its
// limiter; a gate closed while waiting for the slot gives the slot back.
func (p *Provider) admit(ctx context.Context) (*provider.Slot, error) {
	for {
		if err := p.gate.wait(ctx, p.clk); err != nil {
			return nil, err
		}
		slot, err := p.lim.AcquireAs(ctx, p.keyID)
		if err != nil {
			return nil, err
		}
		if !p.gate.deadline().After(p.clk.now()) {
			return slot, nil
		}
		slot.Done(provider.Neutral, 0)
	}
}

// send posts body until a 2xx response arrives, a failure is final, or
// the retries run out. Every try first waits for the endpoint's gate and
// limiter; a request is never retried once its headers have arrived.
func (p *Provider) send(ctx context.Context, body []byte) (*http.Response, *attempt, error) {
	for try := 0; ; try++ {
		slot, err := p.admit(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("chat request: %w", err)
		}
		sent := time.Now()
		resp, att, err := p.try(ctx, body)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			if err := notEventStream(resp); err != nil {
				resp.Body.Close()
				att.stop()
				slot.Done(provider.Neutral, 0)
				return nil, nil, fmt.Errorf("chat request: %w", err)
			}
			att.slot, att.ttfb = slot, time.Since(sent)
			return resp, att, nil
		}
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
				att.stop()
			}
			slot.Done(provider.Neutral, 0)
			return nil, nil, fmt.Errorf("chat request: %w", ctx.Err())
		}
		delay := backoff(try, p.retryBase, retryCap)
		var retry bool
		if err != nil {
			slot.Done(provider.Neutral, 0)
			retry = retryableError(err)
		} else {
			se, hasRetryAfter := p.statusError(resp)
			resp.Body.Close()
			att.stop()
			if se.StatusCode == http.StatusTooManyRequests || se.StatusCode == http.StatusServiceUnavailable {
				// Over the endpoint's limit: the limiter halves the
				// window every agent of the process shares.
				slot.Done(provider.Throttled, 0)
			} else {
				slot.Done(provider.Neutral, 0)
			}
			err, retry = se, retryableStatus(se.StatusCode)
			// The endpoint told every client how long to wait: close
			// its gate so that all requests in the process wait, this
			// one's retry included. Without Retry-After the smaller
			// window slows everyone and this request backs off alone.
			if hasRetryAfter {
				p.gate.holdUntil(p.clk.now().Add(se.RetryAfter))
				delay = 0
			}
		}
		if !retry || try >= p.maxRetries {
			if try > 0 {
				return nil, nil, fmt.Errorf("chat request failed after %d attempts: %w", try+1, err)
			}
			return nil, nil, fmt.Errorf("chat request: %w", err)
		}
		wait := delay
		if se, ok := errors.AsType[*StatusError](err); ok && se.RetryAfter > wait {
			wait = se.RetryAfter
		}
		provider.NotifyRetry(ctx, provider.RetryNotice{Attempt: try + 2, Of: p.maxRetries + 1, Delay: wait, Reason: retryReason(err)})
		if delay > 0 {
			if err := p.clk.sleep(ctx, delay); err != nil {
				return nil, nil, fmt.Errorf("chat request: %w", err)
			}
		}
	}
}

// try makes one HTTP exchange. The stall timer already runs while waiting
// for the headers, so a server that accepts the connection and never
// answers is treated like one that stalls mid-stream.
func (p *Provider) try(ctx context.Context, body []byte) (*http.Response, *attempt, error) {
	actx, cancel := context.WithCancelCause(ctx)
	att := &attempt{ctx: actx, cancel: cancel, stall: p.stall}
	att.timer = time.AfterFunc(p.stall, func() { cancel(stalledError(p.stall)) })
	req, err := http.NewRequestWithContext(actx, http.MethodPost, p.chatURL, bytes.NewReader(body))
	if err != nil {
		att.stop()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if cause := context.Cause(actx); errors.Is(cause, ErrStalled) && ctx.Err() == nil {
			err = fmt.Errorf("waiting for response headers: %w", cause)
		}
		att.stop()
		return nil, nil, err
	}
	return resp, att, nil
}

// notEventStream rejects a 2xx reply that is plainly not a stream, such as
// a gateway answering with one JSON document, which would otherwise surface
// later as a puzzling "ended before [DONE]". A missing or unusual content
// type is given the benefit of the doubt.
func notEventStream(resp *http.Response) error {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, bodyExcerptBytes))
	return fmt.Errorf("endpoint answered %s instead of an event stream: %s", mt, excerpt(b, bodyExcerptBytes))
}

// statusError reads the start of a failed reply and its Retry-After.
func (p *Provider) statusError(resp *http.Response) (*StatusError, bool) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, bodyExcerptBytes))
	ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), p.clk.now())
	return &StatusError{StatusCode: resp.StatusCode, Body: excerpt(b, bodyExcerptBytes), RetryAfter: ra}, ok
}

// stallReader re-arms the attempt's stall timer on every byte received and
// reports a fired timer as the stall it is rather than as a cancellation.
type stallReader struct {
	body io.Reader
	att  *attempt
}

func (s *stallReader) Read(b []byte) (int, error) {
	n, err := s.body.Read(b)
	if n > 0 {
		s.att.timer.Reset(s.att.stall)
	}
	if err != nil && err != io.EOF {
		if cause := context.Cause(s.att.ctx); errors.Is(cause, ErrStalled) {
			err = cause
		}
	}
	return n, err
}

// pump decodes the response into ch and always closes it, after exactly
// one terminal chunk.
func (p *Provider) pump(ctx context.Context, resp *http.Response, att *attempt, ch chan provider.Chunk) {
	defer close(ch)
	term := p.read(ctx, resp, att, ch)
	if term.Type == provider.ChunkDone {
		att.slot.Done(provider.Succeeded, att.ttfb)
		provider.NoteAnswered(p.chatURL, att.prefix)
	} else {
		att.slot.Done(provider.Neutral, 0)
	}
	deliver(ctx, ch, term)
}

// read sends the response's chunks to ch and returns the terminal chunk,
// with the body closed and the attempt stopped. A panic while reading (a
// decoder bug, a faulty body) becomes that terminal error, so the stream
// still ends exactly once and only this call fails.
func (p *Provider) read(ctx context.Context, resp *http.Response, att *attempt, ch chan provider.Chunk) (term provider.Chunk) {
	defer panics.Recover(func(err error) {
		term = provider.Chunk{Type: provider.ChunkError, Err: fmt.Errorf("chat stream: %w", err)}
	})
	defer att.stop()
	defer resp.Body.Close()
	body := &stallReader{body: resp.Body, att: att}
	term = decode(body, func(c provider.Chunk) bool {
		select {
		case ch <- c:
			return true
		default:
		}
		// The consumer is behind. The stall timer measures the server's
		// silence, not ours, so it is paused while the send blocks.
		att.timer.Stop()
		defer att.timer.Reset(p.stall)
		select {
		case ch <- c:
			return true
		case <-ctx.Done():
			return false
		}
	})
	if term.Type == provider.ChunkError && ctx.Err() != nil {
		term.Err = fmt.Errorf("chat stream: %w", ctx.Err())
	} else if term.Type == provider.ChunkDone {
		// The answer is whole: for the endpoint the request is over, so
		// its slot is given back now rather than after the drain, which
		// waits on the server's last write and on this process being
		// scheduled (pump's own Done is then a no-op). A limiter that
		// held it longer would count requests the endpoint no longer
		// does and learn a limit above the real one.
		att.slot.Done(provider.Succeeded, att.ttfb)
		// Reading the rest of the body (normally just the end of the
		// chunked encoding) returns the connection to the pool.
		att.timer.Reset(min(p.stall, drainTimeout))
		_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	}
	return term
}

// deliver sends the terminal chunk without ever blocking past ctx. Once ctx
// has ended the consumer may have stopped reading, and whatever is still
// buffered is stale: the oldest buffered chunks are discarded until the
// terminal fits, so a consumer that keeps draining always ends on it and
// one that walked away holds nothing up.
func deliver(ctx context.Context, ch chan provider.Chunk, term provider.Chunk) {
	select {
	case ch <- term:
		return
	case <-ctx.Done():
	}
	for {
		select {
		case ch <- term:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// retryReason is why an attempt failed, as a short phrase: the status line
// of a refusal, else the error.
func retryReason(err error) string {
	if se, ok := errors.AsType[*StatusError](err); ok {
		return fmt.Sprintf("%d %s", se.StatusCode, http.StatusText(se.StatusCode))
	}
	return err.Error()
}
