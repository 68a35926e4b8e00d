package registry

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
	"github.com/isamatch/isamatch/pkg/registry/netguard"
)

// defaultBaseTransport is http.DefaultTransport's shape with the given
// trusted roots, dialling through the address guard.
func defaultBaseTransport(c *config, guard *netguard.Guard) http.RoundTripper {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           guard.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   c.perHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if c.rootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: c.rootCAs, MinVersion: tls.VersionTLS12}
	}
	if len(c.hostTLS) == 0 {
		return t
	}
	hosts := make(map[string]http.RoundTripper, len(c.hostTLS))
	for h, cfg := range c.hostTLS {
		ht := t.Clone()
		ht.TLSClientConfig = cfg
		hosts[h] = ht
	}
	return &perHostTLS{def: t, hosts: hosts}
}

// boundedTransport is the innermost transport of every registry request:
// it refuses plain HTTP to hosts not named insecure and requests to hosts
// whose Retry-After has not passed, sends a request for an endpoint with
// its own API root there (rewriteAPIRoot), takes a slot of the
// resolution's namespace, of the registry host and of the global pool
// (held until the body is closed or read to its end), counts the request,
// and caps every response body and the resolution's total bytes.
type boundedTransport struct {
	next       http.RoundTripper
	insecure   map[string]bool
	global     *slots.Pool
	hosts      *slots.Keyed
	namespaces *slots.Keyed
	maxBytes   int64
	metrics    *Metrics
	limits     *rateLimits
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.URL.Scheme != "https" && !t.insecure[req.URL.Host] {
		return nil, fmt.Errorf("%w: plain HTTP to %s: not an insecure registry (--insecure-registry)", errRefused, req.URL.Host)
	}
	if err := t.limits.check(req.URL.Host); err != nil {
		return nil, err
	}
	orig := req
	req = rewriteAPIRoot(req)
	res := resolutionOf(ctx)
	release, err := slots.AcquireAll(ctx,
		func(ctx context.Context) (func(), error) { return t.namespaces.Acquire(ctx, res.namespace) },
		func(ctx context.Context) (func(), error) { return t.hosts.Acquire(ctx, req.URL.Host) },
		t.global.Acquire,
	)
	if err != nil {
		return nil, err
	}
	// Safety net: a body nobody closes cannot hold its slots past the
	// resolution it belongs to.
	stop := context.AfterFunc(ctx, release)
	done := func() { stop(); release() }

	t.metrics.request(requestType(orig))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		done()
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		t.limits.record(req.URL.Host, resp.Header)
	}
	limit := t.maxBytes
	if res.layers && requestType(orig) == "blob" && res.budget != nil {
		// A layer is read only as far as its reader needs: the budget
		// counts what is read, whatever the length announced.
		limit = res.budget.maxBytes
	} else {
		if resp.ContentLength > limit {
			resp.Body.Close()
			done()
			return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", errTooLarge, req.URL.Path, resp.ContentLength, limit)
		}
		if err := res.budget.fits(resp.ContentLength); err != nil {
			resp.Body.Close()
			done()
			return nil, err
		}
	}
	resp.Body = &boundedBody{rc: resp.Body, left: limit, path: req.URL.Path, limit: limit,
		budget: res.budget, release: done}
	return resp, nil
}

func requestType(req *http.Request) string {
	p := req.URL.Path
	switch {
	case strings.Contains(p, "/manifests/") && req.Method == http.MethodHead:
		return "head"
	case strings.Contains(p, "/manifests/"):
		return "manifest"
	case strings.Contains(p, "/blobs/"):
		return "blob"
	case p == "/v2/" || p == "/v2":
		return "ping"
	default:
		return "token"
	}
}

type boundedBody struct {
	rc      io.ReadCloser
	left    int64
	limit   int64
	path    string
	budget  *budget
	release func()
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe for one more byte: exactly limit bytes is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.release()
			return 0, fmt.Errorf("%w: %s exceeds the limit of %d bytes", errTooLarge, b.path, b.limit)
		}
		if err != nil {
			b.release()
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if berr := b.budget.spend(n); berr != nil {
		b.release()
		return 0, berr
	}
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *boundedBody) Close() error {
	b.release()
	return b.rc.Close()
}
