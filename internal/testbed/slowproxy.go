package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// SlowProxy is a plain-HTTP reverse proxy on loopback in front of a
// Registry that holds every manifest request by tag for Delay before
// forwarding it: a registry that answers each new image after Delay. It
// logs in to the registry itself, so clients reach it anonymously as an
// insecure registry (--insecure-registry=Host).
type SlowProxy struct {
	// Host is "127.0.0.1:<port>": image references name it.
	Host string

	delay atomic.Int64
	srv   *http.Server
}

// StartSlowProxy starts a SlowProxy in front of reg.
func StartSlowProxy(reg *Registry, delay time.Duration) (*SlowProxy, error) {
	u, err := url.Parse("https://" + reg.Host)
	if err != nil {
		return nil, fmt.Errorf("parse registry host %q: %w", reg.Host, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the slow proxy: %w", err)
	}
	p := &SlowProxy{Host: l.Addr().String()}
	p.delay.Store(int64(delay))
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.SetBasicAuth(reg.Username, reg.Password)
		},
		Transport: reg.Transport(),
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if byTag(r.URL.Path) {
				select {
				case <-time.After(time.Duration(p.delay.Load())):
				case <-r.Context().Done():
					return
				}
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// byTag reports whether path asks for a manifest by tag (not by digest).
func byTag(path string) bool {
	i := strings.LastIndex(path, "/manifests/")
	return strings.HasPrefix(path, "/v2/") && i > 0 && !strings.Contains(path[i:], ":")
}

// SetDelay changes the delay of the requests that arrive from now on.
func (p *SlowProxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Ref returns "<proxy host>/<repo>:<tag>".
func (p *SlowProxy) Ref(repo, tag string) string { return p.Host + "/" + repo + ":" + tag }

// Stop closes the proxy.
func (p *SlowProxy) Stop() error {
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop slow proxy: %w", err)
	}
	return nil
}
