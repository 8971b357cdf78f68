package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/oauth2"

	"reasonix/core/atomicfile"
)

// StoreDir is the directory under the reasonix home that holds tokens,
// one file per server.
const StoreDir = "mcp-oauth"

// Store keeps each server's OAuth client and tokens in a file of its own,
// readable by the user only (mode 0600, in a 0700 directory). A nil
// *Store keeps nothing.
type Store struct {
	dir string
	mu  sync.Mutex
}

// NewStore returns the store under the reasonix home.
func NewStore(home string) *Store { return &Store{dir: filepath.Join(home, StoreDir)} }

// Record is what is stored for one server: the client that obtained the
// token and how to refresh it.
type Record struct {
	// URL is the server the token was issued for; a token for another
	// URL is not used.
	URL string `json:"url"`
	// ClientID, ClientSecret, TokenURL, AuthStyle and Scopes rebuild the
	// OAuth client for refreshing.
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	TokenURL     string   `json:"token_url"`
	AuthStyle    int      `json:"auth_style,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// Token is the last token obtained.
	Token *oauth2.Token `json:"token"`
}

func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)}}
}

// Path is the file of server's record.
func (s *Store) Path(server string) string {
	return filepath.Join(s.dir, fileName(server)+".json")
}

// fileName keeps a server name safe as a file name.
func fileName(server string) string {
	var b strings.Builder
	for _, r := range server {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "%%%02x", r)
		}
	}
	if b.Len() == 0 || strings.HasPrefix(b.String(), ".") {
		return "_" + b.String()
	}
	return b.String()
}

// Load returns server's record when it was issued for url; nil when there
// is none (or for another url).
func (s *Store) Load(server, url string) (*Record, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth tokens of %q: %w", server, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("oauth tokens of %q (%s): %w", server, s.Path(server), err)
	}
	if r.URL != url {
		return nil, nil
	}
	return &r, nil
}

// Save writes server's record.
func (s *Store) Save(server string, r Record) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("oauth token store: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("oauth tokens of %q: %w", server, err)
	}
	if err := atomicfile.Write(s.Path(server), data, 0o600); err != nil {
		return fmt.Errorf("oauth tokens of %q: %w", server, err)
	}
	return nil
}

// Delete forgets server's record; it reports whether there was one.
func (s *Store) Delete(server string) (bool, error) {
	if s == nil {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("oauth tokens of %q: %w", server, err)
	}
	return true, nil
}

// storingSource is a token source that stores every new token it hands
// out, so a refreshed token survives the run.
type storingSource struct {
	base   oauth2.TokenSource
	store  *Store
	server string

	mu   sync.Mutex
	rec  Record
	last string
}

// Token implements oauth2.TokenSource.
func (s *storingSource) Token() (*oauth2.Token, error) {
	tok, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := tok.AccessToken != s.last
	s.mu.Unlock()
	if changed {
		// A token that cannot be stored still works for this run.
		_ = s.save(tok)
	}
	return tok, nil
}

func (s *storingSource) save(tok *oauth2.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Token = tok
	s.last = tok.AccessToken
	return s.store.Save(s.server, s.rec)
}
