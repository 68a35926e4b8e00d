package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/registry"
)

// TestRegistryOptions: the registry fields reach the resolver's Options
// field by field, registry.cacheTTL 0 turns the cache of tags off rather than
// meaning the default, and what parseArgs accepts the resolver accepts.
func TestRegistryOptions(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   func(*registry.Options)
	}{
		{name: "defaults", want: func(*registry.Options) {}},
		{name: "every registry field", config: `registry: {insecureRegistries: ["lab:5000"], allowRegistries: [10.0.0.0/8],
  clusterNetworks: [10.96.0.0/12], mirrors: ["docker.io=mirror.lab:5000"],
  maxPerHost: 3, maxPerNamespace: 2, maxBytes: 1000,
  maxIndexEntries: 9, cacheBytes: 2000, digestCacheBytes: 3000,
  cacheTTL: 1m}`,
			want: func(o *registry.Options) {
				o.InsecureRegistries, o.AllowedRegistries = []string{"lab:5000"}, []string{"10.0.0.0/8"}
				o.ClusterNetworks, o.Mirrors = []string{"10.96.0.0/12"}, []string{"docker.io=mirror.lab:5000"}
				o.MaxPerHost, o.MaxPerNamespace, o.MaxResolutionBytes, o.MaxIndexEntries = 3, 2, 1000, 9
				o.MaxCacheBytes, o.MaxDigestCacheBytes, o.TTL = 2000, 3000, time.Minute
			}},
		{name: "cache off", config: "registry: {cacheTTL: 0s}", want: func(o *registry.Options) { o.TTL = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, []string{"--config", writeConfig(t, tc.config+"\n")})
			if err != nil {
				t.Fatalf("parseArgs with\n%s\n: %v", tc.config, err)
			}
			want := registry.Options{
				MaxPerHost: registry.DefaultMaxPerHost, MaxPerNamespace: registry.DefaultMaxPerNamespace,
				MaxResolutionBytes: registry.DefaultMaxResolutionBytes, MaxIndexEntries: registry.DefaultMaxIndexEntries,
				MaxCacheBytes: registry.DefaultMaxCacheBytes, MaxDigestCacheBytes: registry.DefaultMaxDigestCacheBytes,
				TTL: registry.DefaultTTL,
			}
			tc.want(&want)
			got := o.registryOptions(nil, nil)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(registry.Options{}), cmpEmptyAsNil); diff != "" {
				t.Errorf("registry options (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// cmpEmptyAsNil treats an empty list as none.
var cmpEmptyAsNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestWatcherGrace(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: -1, 15 * time.Second: 15 * time.Second, time.Minute: time.Minute} {
		if got := watcherGrace(in); got != want {
			t.Errorf("watcherGrace(%s) = %s, want %s", in, got, want)
		}
	}
}
