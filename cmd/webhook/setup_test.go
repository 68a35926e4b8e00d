package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/registry"
)

// TestRegistryOptions: the registry flags reach the resolver's Options
// field by field, --cache-ttl=0 turns the cache of tags off rather than
// meaning the default, and what parseArgs accepts the resolver accepts.
func TestRegistryOptions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want func(*registry.Options)
	}{
		{name: "defaults", want: func(*registry.Options) {}},
		{name: "every registry flag", args: []string{"--insecure-registry", "lab:5000", "--allow-registry", "10.0.0.0/8",
			"--cluster-network", "10.96.0.0/12", "--registry-mirror", "docker.io=mirror.lab:5000",
			"--registry-max-per-host", "3", "--registry-max-per-namespace", "2", "--registry-max-bytes", "1000",
			"--registry-max-index-entries", "9", "--registry-cache-bytes", "2000", "--registry-digest-cache-bytes", "3000",
			"--cache-ttl", "1m"},
			want: func(o *registry.Options) {
				o.InsecureRegistries, o.AllowedRegistries = []string{"lab:5000"}, []string{"10.0.0.0/8"}
				o.ClusterNetworks, o.Mirrors = []string{"10.96.0.0/12"}, []string{"docker.io=mirror.lab:5000"}
				o.MaxPerHost, o.MaxPerNamespace, o.MaxResolutionBytes, o.MaxIndexEntries = 3, 2, 1000, 9
				o.MaxCacheBytes, o.MaxDigestCacheBytes, o.TTL = 2000, 3000, time.Minute
			}},
		{name: "cache off", args: []string{"--cache-ttl", "0"}, want: func(o *registry.Options) { o.TTL = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, tc.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
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

// cmpEmptyAsNil treats an empty slice of flag values as none.
var cmpEmptyAsNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())
