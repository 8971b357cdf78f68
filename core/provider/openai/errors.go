package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrStalled is wrapped by the error of a stream, or of a request still
// waiting for its response headers, that received no byte for the stall
// timeout.
var ErrStalled = errors.New("stream stalled")

// stalledError reports a stall with the timeout that expired.
func stalledError(d time.Duration) error {
	return fmt.Errorf("%w: no data for %gs", ErrStalled, d.Seconds())
}

// bodyExcerptBytes is how much of an error reply StatusError keeps: enough
// for the vendor's error message, not enough to flood a log.
const bodyExcerptBytes = 512

// StatusError is a non-2xx reply from the endpoint, returned once retries
// are exhausted or when the status is not retryable.
type StatusError struct {
	// StatusCode is the HTTP status of the last attempt.
	StatusCode int
	// Body is the start of the reply body (at most 512 bytes), trimmed
	// and made valid UTF-8.
	Body string
	// RetryAfter is the delay the server asked for, capped, or zero when
	// it sent no usable Retry-After header.
	RetryAfter time.Duration
}

// Error names the status and says what the endpoint said: the message of
// an OpenAI-style error object ({"error":{"message":…}}), else the body
// excerpt. Detail keeps the raw excerpt.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if said := bodyMessage(e.Body); said != "" {
		msg += ": " + said
	}
	return msg
}

// Detail is the reply's raw body excerpt.
func (e *StatusError) Detail() string { return e.Body }

// bodyMessage is the human part of an error reply: error.message (or a
// top-level message) of a JSON body, else the body itself.
func bodyMessage(body string) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	var inner struct {
		Message string `json:"message"`
	}
	if len(v.Error) > 0 && json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
		return inner.Message
	}
	var plain string
	if len(v.Error) > 0 && json.Unmarshal(v.Error, &plain) == nil && plain != "" {
		return plain
	}
	if v.Message != "" {
		return v.Message
	}
	return body
}

// excerpt trims b to at most n bytes on a character boundary and makes it
// printable as one log-friendly string.
func excerpt(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		for len(b) > 0 && !utf8.Valid(b) && len(b) > n-utf8.UTFMax {
			b = b[:len(b)-1]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// APIError is an error object the endpoint sent inside a stream that had
// already started, e.g. an overloaded backend giving up mid-reply.
type APIError struct {
	Message string
	Type    string
	Code    string
}

// Error renders the vendor's message with its type and code when present.
func (e *APIError) Error() string {
	msg := "api error: " + e.Message
	var tags []string
	for _, t := range []string{e.Type, e.Code} {
		if t != "" {
			tags = append(tags, t)
		}
	}
	if len(tags) > 0 {
		msg += " (" + strings.Join(tags, ", ") + ")"
	}
	return msg
}
