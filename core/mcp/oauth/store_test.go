package oauth

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestStore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := NewStore(home)
	const url = "https://mcp.example.com/mcp"
	if r, err := s.Load("remote", url); err != nil || r != nil {
		t.Fatalf("Load of nothing = %+v, %v", r, err)
	}
	rec := Record{URL: url, ClientID: "c", TokenURL: "https://as.example.com/token",
		Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Unix(2000000000, 0)}}
	if err := s.Save("remote", rec); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path("remote"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, want 0600", fi.Mode().Perm())
	}
	if di, err := os.Stat(filepath.Join(home, StoreDir)); err != nil || (runtime.GOOS != "windows" && di.Mode().Perm() != 0o700) {
		t.Errorf("token dir = %v, %v; want mode 0700", di.Mode(), err)
	}
	got, err := s.Load("remote", url)
	if err != nil || got == nil || got.Token.RefreshToken != "r" || got.ClientID != "c" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if other, err := s.Load("remote", "https://elsewhere.example.com/mcp"); err != nil || other != nil {
		t.Errorf("a token for another url was used: %+v, %v", other, err)
	}
	if gone, err := s.Delete("remote"); !gone || err != nil {
		t.Errorf("Delete = %v, %v", gone, err)
	}
	if gone, err := s.Delete("remote"); gone || err != nil {
		t.Errorf("second Delete = %v, %v", gone, err)
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"github", "github"},
		{"http://127.0.0.1:8080/mcp", "http%3a%2f%2f127.0.0.1%3a8080%2fmcp"},
		{"../up", "_..%2fup"},
		{"", "_"},
	}
	for _, tt := range tests {
		if got := fileName(tt.in); got != tt.want {
			t.Errorf("fileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
