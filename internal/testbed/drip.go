package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DripRegistry is a plain-HTTP listener on loopback that answers every
// request (the /v2/ ping, manifests, tokens) with 200, a Content-Length of
// 100000 and a body of one byte a second: a registry so slow that every
// request sent to it holds its connection, and the client's slot, until
// the client gives up. Clients reach it as an insecure registry
// (--insecure-registry=Host).
type DripRegistry struct {
	// Host is "127.0.0.1:<port>": image references name it.
	Host string

	inFlight atomic.Int64
	stop     chan struct{}
	stopOnce sync.Once
	srv      *http.Server
}

// StartDripRegistry starts a DripRegistry.
func StartDripRegistry() (*DripRegistry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the drip registry: %w", err)
	}
	d := &DripRegistry{Host: l.Addr().String(), stop: make(chan struct{})}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

func (d *DripRegistry) serve(w http.ResponseWriter, r *http.Request) {
	d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
	w.Header().Set("Content-Length", "100000")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if _, err := w.Write([]byte(" ")); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-tick.C:
		case <-d.stop:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// InFlight is the number of requests the registry holds now.
func (d *DripRegistry) InFlight() int64 { return d.inFlight.Load() }

// Stop ends every held request and closes the listener.
func (d *DripRegistry) Stop() error {
	if d == nil {
		return nil
	}
	d.stopOnce.Do(func() { close(d.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop drip registry: %w", err)
	}
	return nil
}
