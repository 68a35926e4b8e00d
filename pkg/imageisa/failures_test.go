package imageisa

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/isamatch/isamatch/pkg/registry"
)

// flakyRegistry fails its first reads with errs, in order, then serves img.
// With block set, every read first waits for it to close.
type flakyRegistry struct {
	img   v1.Image
	errs  []error
	block chan struct{}
	mu    sync.Mutex
	reads int
}

func (f *flakyRegistry) Image(ctx context.Context, _ string, _ registry.PullAuth, _ registry.Platform, _ int64) (v1.Image, error) {
	f.mu.Lock()
	n := f.reads
	f.reads++
	f.mu.Unlock()
	if f.block != nil {
		<-f.block
	}
	if n < len(f.errs) {
		return nil, f.errs[n]
	}
	return f.img, nil
}

func (f *flakyRegistry) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// vectorImage is a riscv64 image whose entrypoint records rv64imfdv, and
// its platform as registry.Resolver gives it.
func vectorImage(t *testing.T) (v1.Image, registry.Platform) {
	t.Helper()
	img := image(t, "riscv64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, fixtureFile("app", "riscv64-rv64imfdv", t)))
	dg, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return img, registry.Platform{OS: "linux", Architecture: "riscv64", Digest: dg.String()}
}

// TestFailedReadsRetryLater: a read that fails for a passing reason is
// answered ErrFailedRecently, without reading, until RetryAfter has passed;
// then one read tries again, and a success stays cached for good. A
// cancelled context is not remembered.
func TestFailedReadsRetryLater(t *testing.T) {
	refused := errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
	type step struct {
		at        time.Duration // on the inferrer's clock, from the start
		wantErr   error         // errors.Is; nil: the binary's ISA
		wantReads int           // registry reads so far
	}
	cases := []struct {
		name       string
		errs       []error
		retryAfter time.Duration
		steps      []step
	}{
		{name: "registry error remembered for the default minute", errs: []error{refused}, steps: []step{
			{0, refused, 1}, {30 * time.Second, ErrFailedRecently, 1}, {59 * time.Second, ErrFailedRecently, 1},
			{61 * time.Second, nil, 2}, {24 * time.Hour, nil, 2},
		}},
		{name: "deadline of the read's own context", errs: []error{fmt.Errorf("get blob: %w", context.DeadlineExceeded)}, steps: []step{
			{0, context.DeadlineExceeded, 1}, {10 * time.Second, ErrFailedRecently, 1}, {61 * time.Second, nil, 2},
		}},
		{name: "scan time limit", errs: []error{fmt.Errorf("%w: %w of 10s", ErrLimit, errTimeout)}, steps: []step{
			{0, errTimeout, 1}, {10 * time.Second, ErrFailedRecently, 1}, {61 * time.Second, nil, 2},
		}},
		{name: "each failure remembered anew", errs: []error{refused, refused}, steps: []step{
			{0, refused, 1}, {61 * time.Second, refused, 2}, {90 * time.Second, ErrFailedRecently, 2}, {123 * time.Second, nil, 3},
		}},
		{name: "shorter RetryAfter", errs: []error{refused}, retryAfter: 5 * time.Second, steps: []step{
			{0, refused, 1}, {4 * time.Second, ErrFailedRecently, 1}, {6 * time.Second, nil, 2},
		}},
		{name: "negative RetryAfter remembers nothing", errs: []error{refused}, retryAfter: -1, steps: []step{
			{0, refused, 1}, {time.Second, nil, 2},
		}},
		{name: "cancelled context not remembered", errs: []error{fmt.Errorf("get manifest: %w", context.Canceled)}, steps: []step{
			{0, context.Canceled, 1}, {time.Second, nil, 2},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, p := vectorImage(t)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			now := start
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			reg := &flakyRegistry{img: img, errs: tc.errs}
			m := NewMetrics()
			ps := NewPlatforms(NewInferrer(Options{CacheBytes: 1 << 20, RetryAfter: tc.retryAfter, Metrics: m, Now: clock}), reg)
			wantHits := 0
			for i, s := range tc.steps {
				mu.Lock()
				now = start.Add(s.at)
				mu.Unlock()
				r, err := ps.Infer(t.Context(), "reg/app:1", registry.PullAuth{}, p)
				switch {
				case s.wantErr != nil && !errors.Is(err, s.wantErr):
					t.Errorf("step %d at %s: error %v, want %v", i, s.at, err, s.wantErr)
				case s.wantErr == nil && (err != nil || r.ISA == nil || r.ISA.Compact() != "rv64imfdv"):
					t.Errorf("step %d at %s: %+v, %v; want rv64imfdv", i, s.at, r.ISA, err)
				}
				if got := reg.count(); got != s.wantReads {
					t.Errorf("step %d at %s: %d registry reads, want %d", i, s.at, got, s.wantReads)
				}
				if errors.Is(s.wantErr, ErrFailedRecently) {
					wantHits++
					if o := Outcome(r, err); o != "failed-recently" {
						t.Errorf("step %d: Outcome %q, want failed-recently", i, o)
					}
				}
			}
			if got := value(t, m.FailureHits); got != float64(wantHits) {
				t.Errorf("isamatch_elf_failure_cache_hits_total = %v, want %d", got, wantHits)
			}
		})
	}
}

// TestCallerCancelNotRemembered: a caller that gives up while the shared
// read goes on leaves nothing behind; the read's success is cached.
func TestCallerCancelNotRemembered(t *testing.T) {
	img, p := vectorImage(t)
	reg := &flakyRegistry{img: img, block: make(chan struct{})}
	ps := NewPlatforms(NewInferrer(Options{CacheBytes: 1 << 20}), reg)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ps.Infer(ctx, "reg/app:1", registry.PullAuth{}, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("Infer with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err, ok := ps.Cached("reg/app:1", p); ok {
		t.Fatalf("Cached after the caller gave up: %v, want no answer", err)
	}
	close(reg.block)
	r, err := ps.Infer(t.Context(), "reg/app:1", registry.PullAuth{}, p)
	if err != nil || r.ISA == nil || r.ISA.Compact() != "rv64imfdv" {
		t.Fatalf("Infer after the read went on: %+v, %v; want rv64imfdv", r.ISA, err)
	}
	if n := reg.count(); n != 1 {
		t.Errorf("%d registry reads, want 1 (the shared read)", n)
	}
}
