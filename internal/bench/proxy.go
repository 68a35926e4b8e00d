package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Request kinds a CountingProxy tells apart.
const (
	KindPing        = "ping"        // GET /v2/
	KindTagManifest = "tagManifest" // a manifest by tag: the index fetch
	KindDigest      = "digestManifest"
	KindBlob        = "blob" // image configs
	KindOther       = "other"
)

// RequestKey is what one registry request was about. Tag is set for
// KindTagManifest only.
type RequestKey struct {
	Repo, Kind, Tag string
}

// ClassifyPath returns the repository and kind of a registry API path.
func ClassifyPath(path string) RequestKey {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return RequestKey{Kind: KindOther}
	}
	if rest == "" {
		return RequestKey{Kind: KindPing}
	}
	for _, sep := range []string{"/manifests/", "/blobs/"} {
		i := strings.LastIndex(rest, sep)
		if i <= 0 {
			continue
		}
		repo, ref := rest[:i], rest[i+len(sep):]
		switch {
		case sep == "/blobs/":
			return RequestKey{Repo: repo, Kind: KindBlob}
		case strings.Contains(ref, ":"):
			return RequestKey{Repo: repo, Kind: KindDigest}
		default:
			return RequestKey{Repo: repo, Kind: KindTagManifest, Tag: ref}
		}
	}
	return RequestKey{Repo: rest, Kind: KindOther}
}

// CountingProxy is a plain-HTTP reverse proxy on loopback in front of the
// TLS registry that counts the requests it forwards, so a benchmark can say
// how many fetches each image cost. The webhook reaches it as an insecure
// registry.
type CountingProxy struct {
	// Host is "127.0.0.1:<port>": image references name it.
	Host string

	srv    *http.Server
	mu     sync.Mutex
	counts map[RequestKey]int
}

// StartCountingProxy forwards to https://<target> with transport.
func StartCountingProxy(target string, transport http.RoundTripper) (*CountingProxy, error) {
	u, err := url.Parse("https://" + target)
	if err != nil {
		return nil, fmt.Errorf("parse registry host %q: %w", target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the counting proxy: %w", err)
	}
	p := &CountingProxy{Host: l.Addr().String(), counts: map[RequestKey]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport: transport,
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.counts[ClassifyPath(r.URL.Path)]++
			p.mu.Unlock()
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// Snapshot returns a copy of the counts so far.
func (p *CountingProxy) Snapshot() map[RequestKey]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[RequestKey]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Stop closes the proxy.
func (p *CountingProxy) Stop() error {
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop counting proxy: %w", err)
	}
	return nil
}

// Delta returns after minus before, for the keys of after.
func Delta(before, after map[RequestKey]int) map[RequestKey]int {
	out := map[RequestKey]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
