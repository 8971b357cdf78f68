package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// endpoint is the one path the HTTP server answers on.
const endpoint = "/mcp"

// serveHTTP serves streamable HTTP on addr, which must be a loopback
// address, until ctx ends. It prints the endpoint URL as the first line
// of stdout, so that a caller that asked for port 0 learns the port.
func serveHTTP(ctx context.Context, addr string, srv *server, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return fmt.Errorf("refusing to serve on %s: only loopback addresses (127.0.0.1, [::1], localhost) are allowed", addr)
	}
	h := &httpHandler{srv: srv, sessions: map[string]bool{}}
	mux := http.NewServeMux()
	mux.Handle(endpoint, h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "http://%s%s\n", ln.Addr(), endpoint)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// httpHandler is the streamable HTTP endpoint. Every reply is a single
// JSON message: this server never needs to stream, so it does not offer
// the GET event stream either.
type httpHandler struct {
	srv      *server
	mu       sync.Mutex
	sessions map[string]bool
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A web page the user visits could make the browser send requests
	// here, directly or through a DNS name rebound to 127.0.0.1. Both show
	// up as a foreign Host or Origin.
	if !loopbackHost(r.Host) {
		http.Error(w, "forbidden host", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *httpHandler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "content type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(protocolVersions, v) {
		http.Error(w, "unsupported protocol version "+v, http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMessage+1))
	if err != nil || len(body) > maxMessage {
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	var m message
	_ = json.Unmarshal(body, &m) // a parse error is answered by handle
	if m.Method == "initialize" {
		sid := newSessionID()
		h.mu.Lock()
		h.sessions[sid] = true
		h.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	} else if status := h.checkSession(r); status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	reply := h.srv.handle(body)
	if reply == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

func (h *httpHandler) delete(w http.ResponseWriter, r *http.Request) {
	if status := h.checkSession(r); status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	h.mu.Lock()
	delete(h.sessions, r.Header.Get("Mcp-Session-Id"))
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// checkSession returns 400 for a request without a session id, 404 for
// an unknown (or ended) session, and 0 when the session is live.
func (h *httpHandler) checkSession(r *http.Request) int {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return http.StatusBadRequest
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.sessions[sid] {
		return http.StatusNotFound
	}
	return 0
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// loopbackHost reports whether a Host header (host or host:port) names
// this machine: localhost or a loopback IP.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin reports whether an Origin header is a page served from
// this machine, such as http://localhost:5173 or http://[::1]:8080.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" && u.Path != "/" {
		return false
	}
	return loopbackHost(u.Host)
}
