package imageisa

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func hash(hex string) Key { return Key{Digest: v1.Hash{Algorithm: "sha256", Hex: hex}} }

func TestCacheEvictsByBytes(t *testing.T) {
	r := Result{Path: "/usr/bin/app"}
	one := entrySize(hash("a"), r, nil)
	c := NewCache(3 * one)
	for _, k := range []string{"a", "b", "c"} {
		c.Add(hash(k), r, nil)
	}
	if _, _, ok := c.Get(hash("a")); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Add(hash("d"), r, nil) // evicts b, the least recently used
	got := map[string]bool{}
	for _, k := range []string{"a", "b", "c", "d"} {
		_, _, got[k] = c.Get(hash(k))
	}
	if d := cmp.Diff(map[string]bool{"a": true, "b": false, "c": true, "d": true}, got); d != "" {
		t.Errorf("present (-want +got):\n%s", d)
	}
	if n, size := c.Len(); n != 3 || size > 3*one {
		t.Errorf("%d entries of %d bytes, want 3 within %d", n, size, 3*one)
	}
	c.Add(hash("huge"), Result{Note: string(make([]byte, 4*one))}, nil)
	if _, _, ok := c.Get(hash("huge")); ok {
		t.Error("an entry over the whole budget was stored")
	}
}

func TestInferrerCachesByDigest(t *testing.T) {
	m := NewMetrics()
	in := NewInferrer(Options{CacheBytes: 1 << 20, Metrics: m})
	good := image(t, "riscv64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, fixtureFile("app", "riscv64-rv64imfd", t)))
	missing := image(t, "riscv64", v1.Config{Entrypoint: []string{"/nope"}}, layer(t, fixtureFile("app", "riscv64-rv64imfd", t)))
	bomb := image(t, "riscv64", v1.Config{Entrypoint: []string{"/nope"}}, layer(t, zeros("z", 80<<20)))
	for range 3 {
		for _, img := range []v1.Image{good, missing, bomb} {
			_, _ = in.Infer(t.Context(), img)
		}
	}
	got := map[string]float64{
		"isa":       value(t, m.Scans.WithLabelValues("isa")),
		"not-found": value(t, m.Scans.WithLabelValues("not-found")),
		"limit":     value(t, m.Scans.WithLabelValues("limit")),
		"hits":      value(t, m.CacheHits),
	}
	if d := cmp.Diff(map[string]float64{"isa": 1, "not-found": 1, "limit": 1, "hits": 6}, got); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
	if b := value(t, m.Bytes); b < 64<<20 {
		t.Errorf("bytes read %v, want at least the 64 MiB the bomb cost", b)
	}
	res, err := in.Infer(t.Context(), good)
	if err != nil || res.Raw != "rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0" {
		t.Errorf("cached result %q, %v", res.Raw, err)
	}
}

func TestCacheable(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{nil, true},
		{ErrNotFound, true},
		{ErrLimit, true},
		{errors.Join(ErrLimit, errTimeout), false},
		{errors.New("connection reset"), false},
	}
	for _, tc := range cases {
		if got := cacheable(tc.err); got != tc.want {
			t.Errorf("cacheable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
