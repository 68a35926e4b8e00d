package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestSlotWaitIsNotCached: a resolution that ends while waiting for a
// slot (of the resolutions in progress, or of the namespace's or the
// registry host's requests) fails as a timeout for its callers, but the
// registry was never asked, so the next lookup asks it.
func TestSlotWaitIsNotCached(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/waiting:1", image(t, "linux", "arm64", "", nil))
	tests := []struct {
		name string
		opts Options
		// take holds every slot of one pool and returns their release.
		take func(ctx context.Context, r *Resolver) (func(), error)
		// inFetch: the wait is inside the registry fetch, which ends at
		// the fetch timeout, at about the caller's deadline.
		inFetch bool
	}{
		{name: "resolutions in progress", opts: Options{maxFlights: 1, maxFlightsPerNS: 5},
			take: func(ctx context.Context, r *Resolver) (func(), error) { return r.allFlights.Acquire(ctx) }},
		{name: "resolutions of the namespace", opts: Options{maxFlights: 5, maxFlightsPerNS: 1},
			take: func(ctx context.Context, r *Resolver) (func(), error) {
				return r.nsFlights.Acquire(ctx, teamA.Namespace)
			}},
		{name: "requests of the namespace", opts: Options{MaxPerNamespace: 1}, inFetch: true,
			take: func(ctx context.Context, r *Resolver) (func(), error) {
				return r.transport.(*boundedTransport).namespaces.Acquire(ctx, teamA.Namespace)
			}},
		{name: "requests to the registry host", opts: Options{MaxPerHost: 1}, inFetch: true,
			take: func(ctx context.Context, r *Resolver) (func(), error) {
				return r.transport.(*boundedTransport).hosts.Acquire(ctx, tr.host)
			}},
		{name: "all requests", opts: Options{maxConcurrent: 1}, inFetch: true,
			take: func(ctx context.Context, r *Resolver) (func(), error) {
				return r.transport.(*boundedTransport).global.Acquire(ctx)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The caller's deadline ends a wait for a resolution slot; the
			// fetch timeout ends a wait for a request slot.
			m := NewMetrics()
			o := tc.opts
			o.InsecureRegistries, o.fetchTimeout, o.Metrics = []string{tr.host}, time.Second, m
			r := newResolver(t, o)
			release, err := tc.take(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			tr.reset()
			_, err = r.Resolve(ctx, tr.ref("app/waiting:1"), teamA)
			var re *Error
			if !errors.As(err, &re) || re.Kind != KindTimeout {
				t.Fatalf("waiting Resolve error = %v, want kind %s", err, KindTimeout)
			}
			if n := tr.count(http.MethodGet, "/manifests/"); n != 0 {
				t.Errorf("manifest GETs while every slot was taken = %d, want 0", n)
			}
			for tc.inFetch && histogramCount(t, m.Duration) == 0 {
				time.Sleep(time.Millisecond) // until the fetch gave up waiting
			}
			release()
			got, err := r.Resolve(t.Context(), tr.ref("app/waiting:1"), teamA)
			if err != nil {
				t.Fatalf("Resolve after the slot freed = %v, want the platforms (the slot wait must not be cached)", err)
			}
			if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "arm64"}}, got, ignoreDigest); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

// histogramCount reads a histogram's sample count.
func histogramCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatalf("read metric: %v", err)
	}
	return m.GetHistogram().GetSampleCount()
}

// dripRegistry answers every request with a 200 whose body arrives one
// byte a second, until the test ends.
func dripRegistry(t *testing.T) (host string, inFlight *atomic.Int64) {
	t.Helper()
	stop := make(chan struct{})
	inFlight = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-tick.C:
			case <-stop:
				return
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: handlers return, Close does not wait
	return strings.TrimPrefix(srv.URL, "http://"), inFlight
}

// TestNoisyNeighbour: while one namespace's pods name registries that
// drip one byte a second (holding every request they get), another
// namespace's cold images on a healthy registry resolve about as fast as
// when it is alone, with their platforms.
func TestNoisyNeighbour(t *testing.T) {
	healthy := newTestRegistry(t)
	const coldImages = 8
	tests := []struct {
		name string
		// noisy returns the image references of the noisy pods and their
		// namespaces.
		slowHosts  int
		namespaces int
	}{
		{name: "one namespace over many slow registries", slowHosts: 6, namespaces: 1},
		{name: "many namespaces on one slow registry", slowHosts: 1, namespaces: 8},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var slow []string
			var slowInFlight []*atomic.Int64
			for range tc.slowHosts {
				h, n := dripRegistry(t)
				slow, slowInFlight = append(slow, h), append(slowInFlight, n)
			}
			r := newResolver(t, Options{InsecureRegistries: append(slow, healthy.host), fetchTimeout: time.Minute})
			team := PullAuth{Namespace: "team-b"}
			// coldRun resolves coldImages images never seen before, at
			// once, and returns how long the slowest took.
			run := 0
			coldRun := func(ctx context.Context) time.Duration {
				t.Helper()
				run++
				var refs []string
				for i := range coldImages {
					tag := fmt.Sprintf("app/cold%d:%d-%d", ti, run, i)
					healthy.pushImage(t, tag, image(t, "linux", "riscv64", "rva23u64", map[string]string{isa.BareImageRequestLabel: "rv64gcv"}))
					refs = append(refs, healthy.ref(tag))
				}
				start := time.Now()
				var wg sync.WaitGroup
				for _, ref := range refs {
					wg.Go(func() {
						got, err := r.Resolve(ctx, ref, team)
						if err != nil {
							t.Errorf("Resolve(%s): %v", ref, err)
							return
						}
						want := []Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", ISARequest: "rv64gcv"}}
						if diff := cmp.Diff(want, got, ignoreDigest); diff != "" {
							t.Errorf("Resolve(%s) (-want +got):\n%s", ref, diff)
						}
					})
				}
				wg.Wait()
				return time.Since(start)
			}
			var alone time.Duration
			for range 3 { // the slowest of three: a generous baseline
				alone = max(alone, coldRun(t.Context()))
			}

			noisyCtx, stopNoisy := context.WithCancel(t.Context())
			defer stopNoisy()
			var noisy sync.WaitGroup
			defer noisy.Wait()
			for i := range 64 {
				ref := fmt.Sprintf("%s/noisy/app:%d", slow[i%len(slow)], i)
				auth := PullAuth{Namespace: fmt.Sprintf("team-a%d", i%tc.namespaces)}
				noisy.Go(func() { _, _ = r.Resolve(noisyCtx, ref, auth) })
			}
			// Wait until the slow registries hold all they will get.
			held := func() int64 {
				var n int64
				for _, c := range slowInFlight {
					n += c.Load()
				}
				return n
			}
			for deadline := time.Now().Add(10 * time.Second); held() < DefaultMaxPerNamespace && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			t.Logf("slow registries hold %d requests", held())

			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			withNoise := coldRun(ctx)
			ratio := float64(withNoise) / float64(alone)
			t.Logf("cold resolutions: alone %v (slowest of 3), beside the noisy pods %v (%.1fx)", alone, withNoise, ratio)
			if ratio > 20 {
				t.Errorf("cold resolutions took %v beside the noisy pods, %.0fx their %v alone; want within 20x", withNoise, ratio, alone)
			}
			stopNoisy()
		})
	}
}
