package credprov

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/prometheus/client_golang/prometheus"
)

// pluginSeries returns the isamatch_registry_credential_provider_* series
// of m that have a value, as "name{label=value,...}" -> value (the sample
// count for a histogram, under name_count).
func pluginSeries(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range m.Collectors() {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "isamatch_registry_credential_provider_") {
			continue
		}
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case s.GetHistogram() != nil:
				got[mf.GetName()+"_count"+key] = float64(s.GetHistogram().GetSampleCount())
			default:
				got[mf.GetName()+key] = s.GetCounter().GetValue()
			}
		}
	}
	return got
}

// Each plugin run is counted by provider and result and timed; an answer
// from the cache is counted as a hit of its provider, with no run.
func testCredentialProvidersMetrics(t *testing.T, bin string) {
	m := NewMetrics()
	kc := newTestProviders(t, bin, Options{Metrics: m},
		testProvider{name: "test-provider", mode: "ok", match: "*.example", defaultCache: "1h",
			env: map[string]string{"TEST_USERNAME": "u", "TEST_PASSWORD": "p"}},
		testProvider{name: "fail", mode: "fail", match: "*.failing", defaultCache: "1h"})
	// a.example and b.example run the plugin (cacheKeyType Registry);
	// a.example's second image is answered from the cache. The failing
	// provider runs once: its failure is cached (for the failure TTL), and
	// the second image is a cache hit too.
	for _, image := range []string{"a.example/team/app", "a.example/team/other", "b.example/app", "r.failing/app", "r.failing/app"} {
		ref, err := name.NewRepository(image)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kc.ResolveContext(t.Context(), ref)
		if failing := strings.HasSuffix(ref.RegistryStr(), ".failing"); (err != nil) != failing {
			t.Fatalf("ResolveContext(%s) error = %v, want an error: %t", image, err, failing)
		}
	}
	want := map[string]float64{
		"isamatch_registry_credential_provider_runs_total{provider=test-provider,result=ok}":   2,
		"isamatch_registry_credential_provider_duration_seconds_count{provider=test-provider}": 2,
		"isamatch_registry_credential_provider_cache_hits_total{provider=test-provider}":       1,
		"isamatch_registry_credential_provider_runs_total{provider=fail,result=error}":         1,
		"isamatch_registry_credential_provider_duration_seconds_count{provider=fail}":          1,
		"isamatch_registry_credential_provider_cache_hits_total{provider=fail}":                1,
	}
	if diff := cmp.Diff(want, pluginSeries(t, m)); diff != "" {
		t.Errorf("credential provider metrics (-want +got):\n%s", diff)
	}
}

func TestPluginResult(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "answer", want: "ok"},
		{name: "deadline", err: fmt.Errorf("credential provider x: no answer within 1s: %w", context.DeadlineExceeded), want: "timeout"},
		{name: "exit status", err: errors.New("credential provider x failed: exit status 1"), want: "error"},
		{name: "canceled", err: fmt.Errorf("credential provider x: %w", context.Canceled), want: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pluginResult(tc.err); got != tc.want {
				t.Errorf("pluginResult(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
