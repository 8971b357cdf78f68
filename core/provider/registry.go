package provider

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Config is a resolved provider instance: one endpoint, one model, one key.
type Config struct {
	// Name is the instance name from config, e.g. "deepseek".
	Name string
	// Kind selects the factory, e.g. "openai".
	Kind string
	// BaseURL is the API root; chat requests go to BaseURL + "/chat/completions".
	BaseURL string
	// ChatURL, when set, is the full chat request URL and wins over BaseURL.
	ChatURL string
	// ModelsURL is the optional model-discovery URL.
	ModelsURL string
	// Model is the model ID sent with each request.
	Model  string
	APIKey string
	// StallTimeout ends a stream that delivers no byte for this long.
	// Zero means the kind's default (120 s for openai).
	StallTimeout time.Duration
	// MaxRetries bounds retries of a request that failed before its first
	// byte (429, 5xx, connection errors). Negative disables retries; zero
	// means the kind's default.
	MaxRetries int
	// RetryBase is the first backoff delay; zero means the kind's default.
	RetryBase time.Duration
	// MaxInFlight is the ceiling of the endpoint's adaptive concurrency
	// window (see Limiter); zero means DefaultMaxInFlight.
	MaxInFlight int
	// OmitReasoning keeps the model's earlier reasoning out of requests,
	// for endpoints that reject the field. The zero value sends it back,
	// which DeepSeek's thinking mode requires once tools are in play.
	OmitReasoning bool
	// HTTPClient is used when set (tests, shared transports).
	HTTPClient *http.Client
	// Extra carries kind-specific options.
	Extra map[string]any
}

// Factory builds a Provider from a resolved config instance.
type Factory func(cfg Config) (Provider, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register adds a factory under a kind. It is called from init and panics on
// a duplicate kind, which is a programming error.
func Register(kind string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[kind]; dup {
		panic(fmt.Sprintf("provider: kind %q registered twice", kind))
	}
	factories[kind] = f
}

// Kinds lists the registered kinds in sorted order.
func Kinds() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(factories))
	for k := range factories {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// New instantiates the provider of cfg.Kind.
func New(cfg Config) (Provider, error) {
	mu.RLock()
	f, ok := factories[cfg.Kind]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown provider kind %q (known: %v)", cfg.Kind, Kinds())
	}
	p, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", cfg.Name, err)
	}
	return p, nil
}
