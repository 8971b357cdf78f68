package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"reasonix/core/provider"
)

// modelsBodyLimit bounds the model list read; real lists are a few KiB.
const modelsBodyLimit = 4 << 20

// ListModels fetches the model IDs an endpoint offers, sorted, from
// cfg.ModelsURL or else the base URL + "/models" (derived from a chat URL
// ending in /chat/completions when no base URL is set). It makes a single
// attempt: it exists for reachability and key checks, where a prompt and
// honest failure is worth more than a retry.
func ListModels(ctx context.Context, cfg provider.Config) ([]string, error) {
	u, err := modelsURL(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, bodyExcerptBytes))
		ra, _ := parseRetryAfter(resp.Header.Get("Retry-After"), realClock.now())
		return nil, fmt.Errorf("list models: %w", &StatusError{StatusCode: resp.StatusCode, Body: excerpt(b, bodyExcerptBytes), RetryAfter: ra})
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, modelsBodyLimit)).Decode(&list); err != nil {
		return nil, fmt.Errorf("list models: decode reply: %w", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func modelsURL(cfg provider.Config) (string, error) {
	u := cfg.ModelsURL
	switch {
	case u != "":
	case cfg.BaseURL != "":
		u = strings.TrimRight(cfg.BaseURL, "/") + "/models"
	case strings.HasSuffix(strings.TrimRight(cfg.ChatURL, "/"), "/chat/completions"):
		u = strings.TrimSuffix(strings.TrimRight(cfg.ChatURL, "/"), "/chat/completions") + "/models"
	default:
		return "", errors.New("list models: set models_url or base_url")
	}
	if err := checkURL(u); err != nil {
		return "", fmt.Errorf("list models: %w", err)
	}
	return u, nil
}
