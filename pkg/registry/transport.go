package registry

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// defaultBaseTransport is http.DefaultTransport's shape with the given
// trusted roots.
func defaultBaseTransport(c *config) http.RoundTripper {
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   c.maxConcurrent,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if c.rootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: c.rootCAs, MinVersion: tls.VersionTLS12}
	}
	return t
}

// boundedTransport is the innermost transport of every registry request: it
// bounds the requests in flight, counts them and caps the size of every
// response body.
type boundedTransport struct {
	next     http.RoundTripper
	slots    chan struct{}
	maxBytes int64
	metrics  *Metrics
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a registry connection slot: %w", ctx.Err())
	}
	var once sync.Once
	release := func() { once.Do(func() { <-t.slots }) }
	// Safety net: a body nobody closes cannot hold its slot past the
	// resolution it belongs to.
	stop := context.AfterFunc(ctx, release)

	t.metrics.request(requestType(req))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		stop()
		release()
		return nil, err
	}
	if resp.ContentLength > t.maxBytes {
		resp.Body.Close()
		stop()
		release()
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", errTooLarge, req.URL.Path, resp.ContentLength, t.maxBytes)
	}
	resp.Body = &boundedBody{rc: resp.Body, left: t.maxBytes, path: req.URL.Path, limit: t.maxBytes,
		release: func() { stop(); release() }}
	return resp, nil
}

func requestType(req *http.Request) string {
	p := req.URL.Path
	switch {
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
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *boundedBody) Close() error {
	b.release()
	return b.rc.Close()
}
