package provider

import (
	"hash/fnv"
	"strconv"
	"sync"
	"time"
)

// PrefixOf is the part of req a provider's prompt cache can share with
// other requests whose conversations differ: its tools and its leading
// system messages. It returns a key for that prefix (a hash, with the
// model) and its size in estimated tokens (four bytes a token, which is
// what matters here: whether the prefix is worth waiting to cache).
func PrefixOf(req Request) (key string, tokens int) {
	h := fnv.New64a()
	n := 0
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
		n += len(s)
	}
	write(req.Model)
	for _, t := range req.Tools {
		write(t.Name)
		write(t.Description)
		write(string(t.Parameters))
	}
	for _, m := range req.Messages {
		if m.Role != RoleSystem {
			break
		}
		write(m.Content)
	}
	return strconv.FormatUint(h.Sum64(), 36), n / 4
}

// WarmTTL is how long a prefix counts as cached at its endpoint after a
// request with it was answered: the shortest lifetime the major providers
// give an idle cache entry (OpenAI's is five to ten minutes, DeepSeek's
// hours).
const WarmTTL = 5 * time.Minute

var (
	warmMu   sync.Mutex
	warmKeys = map[string]time.Time{}
)

// NoteAnswered records that a request with this prefix key was answered
// by endpoint, so the prefix is in the endpoint's prompt cache now.
func NoteAnswered(endpoint, key string) {
	now := time.Now()
	warmMu.Lock()
	defer warmMu.Unlock()
	if len(warmKeys) >= 4096 {
		for k, at := range warmKeys {
			if now.Sub(at) > WarmTTL {
				delete(warmKeys, k)
			}
		}
	}
	warmKeys[endpoint+"\x00"+key] = now
}

// PrefixWarm reports whether a request with this prefix key was answered
// by endpoint within WarmTTL.
func PrefixWarm(endpoint, key string) bool {
	warmMu.Lock()
	defer warmMu.Unlock()
	at, ok := warmKeys[endpoint+"\x00"+key]
	return ok && time.Since(at) <= WarmTTL
}

// PrefixMemo remembers the last prefix key it computed, so that the
// requests of one conversation, which share their tools slice and system
// message, are hashed once rather than on every request. It is safe for
// concurrent use.
type PrefixMemo struct {
	mu     sync.Mutex
	tools  []ToolSchema
	system []string
	model  string
	key    string
	tokens int
}

// Of is PrefixOf(req), from the memo when req has the same model, the
// same tools slice and the same leading system messages as the last one.
func (m *PrefixMemo) Of(req Request) (key string, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key != "" && req.Model == m.model && sameTools(req.Tools, m.tools) && sameSystem(req.Messages, m.system) {
		return m.key, m.tokens
	}
	m.key, m.tokens = PrefixOf(req)
	m.model, m.tools, m.system = req.Model, req.Tools, m.system[:0]
	for _, msg := range req.Messages {
		if msg.Role != RoleSystem {
			break
		}
		m.system = append(m.system, msg.Content)
	}
	return m.key, m.tokens
}

// sameTools reports whether a and b are the same slice (not merely equal
// ones: a registry builds its tool list once and passes it on).
func sameTools(a, b []ToolSchema) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameSystem(msgs []Message, system []string) bool {
	i := 0
	for ; i < len(msgs) && msgs[i].Role == RoleSystem; i++ {
		if i >= len(system) || msgs[i].Content != system[i] {
			return false
		}
	}
	return i == len(system)
}
