package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// embedded is the page: web/index.html and web/assets/. It is served as
// it is, with no build step, and needs nothing from the network.
//
//go:embed all:web
var embedded embed.FS

// handleIndex serves the page at /.
func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	page, err := fs.ReadFile(s.assets, "index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the page is missing from this build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(page)
}
