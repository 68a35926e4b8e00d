package credprov

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	testingclock "k8s.io/utils/clock/testing"
)

// buildTestPlugin builds internal/testbed/testcredprovider, a plugin that
// speaks the kubelet's exec protocol, into a new bin dir as each of names.
func buildTestPlugin(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	first := filepath.Join(dir, names[0])
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", first, "github.com/isamatch/isamatch/internal/testbed/testcredprovider")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin: %v\n%s", err, out)
	}
	for _, n := range names[1:] {
		if err := os.Link(first, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCredentialProviderPlugins runs real plugins, built once.
func TestCredentialProviderPlugins(t *testing.T) {
	bin := buildTestPlugin(t, "test-provider", "hang", "garbage", "flood", "wrong-version", "fail")
	t.Run("cache", func(t *testing.T) { testCredentialProvidersCache(t, bin) })
	t.Run("no match", func(t *testing.T) { testCredentialProvidersNoMatch(t, bin) })
	t.Run("failures", func(t *testing.T) { testCredentialProvidersFailures(t, bin) })
	t.Run("metrics", func(t *testing.T) { testCredentialProvidersMetrics(t, bin) })
}

// testProvider is one provider entry of a test config.
type testProvider struct {
	name, mode, match, defaultCache string
	env                             map[string]string
}

func (p testProvider) yaml() string {
	s := fmt.Sprintf("  - name: %s\n    matchImages: [%q]\n    defaultCacheDuration: %q\n    apiVersion: credentialprovider.kubelet.k8s.io/v1\n    args: [--mode=%s]\n",
		p.name, p.match, p.defaultCache, p.mode)
	if len(p.env) > 0 {
		s += "    env:\n"
		for k, v := range p.env {
			s += fmt.Sprintf("      - {name: %s, value: %q}\n", k, v)
		}
	}
	return s
}

// newTestProviders writes a config of providers and returns the Keychain
// of o with it and the plugins in bin.
func newTestProviders(t *testing.T, bin string, o Options, providers ...testProvider) *Keychain {
	t.Helper()
	cfg := "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n"
	for _, p := range providers {
		cfg += p.yaml()
	}
	path := filepath.Join(t.TempDir(), "credential-providers.yaml")
	writeFile(t, path, []byte(cfg))
	o.ConfigPath, o.BinDir = path, bin
	k, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return k
}

// runs returns the images the plugin was run for, from its count file.
func runs(t *testing.T, countFile string) []string {
	t.Helper()
	data, err := os.ReadFile(countFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// The plugin's answer is cached under the image, its registry or globally,
// for the response's cacheDuration or else the provider's default.
func testCredentialProvidersCache(t *testing.T, bin string) {
	type step struct {
		advance time.Duration
		image   string
	}
	seq := []step{
		{0, "a.example/team/app"},
		{0, "a.example/team/app"},
		{0, "a.example/team/other"},
		{0, "b.example/app"},
		{30 * time.Minute, "a.example/team/app"},
		{31 * time.Minute, "a.example/team/app"},
	}
	tests := []struct {
		name          string
		cacheKeyType  string
		cacheDuration string // "" means none in the response
		defaultCache  string
		want          []string // the images the plugin ran for
	}{
		{name: "Registry", cacheKeyType: "Registry", defaultCache: "1h",
			want: []string{"a.example/team/app", "b.example/app", "a.example/team/app"}},
		{name: "Image", cacheKeyType: "Image", defaultCache: "1h",
			want: []string{"a.example/team/app", "a.example/team/other", "b.example/app", "a.example/team/app"}},
		{name: "Global", cacheKeyType: "Global", defaultCache: "1h",
			want: []string{"a.example/team/app", "a.example/team/app"}},
		{name: "response duration wins", cacheKeyType: "Global", cacheDuration: "20m", defaultCache: "1h",
			want: []string{"a.example/team/app", "a.example/team/app", "a.example/team/app"}},
		{name: "response duration 0: not cached", cacheKeyType: "Global", cacheDuration: "0s", defaultCache: "1h",
			want: []string{"a.example/team/app", "a.example/team/app", "a.example/team/other", "b.example/app", "a.example/team/app", "a.example/team/app"}},
		{name: "default 0: not cached", cacheKeyType: "Registry", defaultCache: "0s",
			want: []string{"a.example/team/app", "a.example/team/app", "a.example/team/other", "b.example/app", "a.example/team/app", "a.example/team/app"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Unix(1e9, 0))
			count := filepath.Join(t.TempDir(), "runs")
			env := map[string]string{"TEST_USERNAME": "u", "TEST_PASSWORD": "p", "TEST_COUNT_FILE": count, "TEST_CACHE_KEY_TYPE": tc.cacheKeyType,
				"TEST_AUTH_KEY": "*.example"}
			if tc.cacheDuration != "" {
				env["TEST_CACHE_DURATION"] = tc.cacheDuration
			}
			kc := newTestProviders(t, bin, Options{now: clock.Now},
				testProvider{name: "test-provider", mode: "ok", match: "*.example", defaultCache: tc.defaultCache, env: env})
			for _, s := range seq {
				clock.Step(s.advance)
				ref, err := name.NewRepository(s.image)
				if err != nil {
					t.Fatal(err)
				}
				auth, err := kc.ResolveContext(t.Context(), ref)
				if err != nil {
					t.Fatalf("ResolveContext(%s): %v", s.image, err)
				}
				cfg, err := authn.Authorization(t.Context(), auth)
				if err != nil || cfg.Username != "u" || cfg.Password != "p" {
					t.Fatalf("ResolveContext(%s) gave %+v, %v; want the plugin's credentials", s.image, cfg, err)
				}
			}
			if diff := cmp.Diff(tc.want, runs(t, count)); diff != "" {
				t.Errorf("plugin runs (-want +got):\n%s", diff)
			}
		})
	}
}

// A provider whose matchImages miss the image is never run.
func testCredentialProvidersNoMatch(t *testing.T, bin string) {
	count := filepath.Join(t.TempDir(), "runs")
	kc := newTestProviders(t, bin, Options{}, testProvider{name: "test-provider", mode: "ok", match: "*.example", defaultCache: "1h",
		env: map[string]string{"TEST_COUNT_FILE": count}})
	ref, err := name.NewRepository("registry.other/app")
	if err != nil {
		t.Fatal(err)
	}
	auth, err := kc.ResolveContext(t.Context(), ref)
	if err != nil || auth != authn.Anonymous {
		t.Errorf("ResolveContext = %v, %v; want anonymous", auth, err)
	}
	if got := runs(t, count); len(got) != 0 {
		t.Errorf("plugin ran for %q, want never", got)
	}
}

// A plugin that hangs, prints garbage or too much, answers another
// apiVersion or fails gives an error naming the provider and what went
// wrong, never what it printed, and a hung plugin's process group is
// killed.
func testCredentialProvidersFailures(t *testing.T, bin string) {
	const secret = "s3cr3t-on-stderr"
	// Only the hung plugin meets its timeout; the others have room to start
	// on a loaded machine.
	tests := []struct {
		mode     string
		timeout  time.Duration
		wantErr  string
		timedOut bool   // the error wraps context.DeadlineExceeded (the resolver's kind "timeout")
		result   string // of isamatch_registry_credential_provider_runs_total
	}{
		{mode: "hang", timeout: 2 * time.Second, wantErr: "credential provider hang: no answer within 2s", timedOut: true, result: "timeout"},
		{mode: "garbage", wantErr: "credential provider garbage: stdout is not a JSON CredentialProviderResponse", result: "error"},
		{mode: "flood", wantErr: "credential provider flood: credential provider printed too much: more than 1048576 bytes on stdout", result: "error"},
		{mode: "wrong-version", wantErr: `credential provider wrong-version: response apiVersion "credentialprovider.kubelet.k8s.io/v1alpha1", want "credentialprovider.kubelet.k8s.io/v1"`, result: "error"},
		{mode: "fail", wantErr: "credential provider fail failed: exit status 1", result: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			timeout := tc.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			m := NewMetrics()
			kc := newTestProviders(t, bin, Options{Timeout: timeout, Metrics: m},
				testProvider{name: tc.mode, mode: tc.mode, match: "registry.example", defaultCache: "1h",
					env: map[string]string{"TEST_PASSWORD": secret, "TEST_PID_FILE": pidFile}})
			err := resolveIn(t.Context(), kc, "team", "registry.example/private/app")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, context.DeadlineExceeded) != tc.timedOut {
				t.Fatalf("ResolveContext error = %v, want one containing %q (timed out: %v)", err, tc.wantErr, tc.timedOut)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("ResolveContext error %q echoes the plugin's stderr", err)
			}
			if tc.mode == "hang" {
				assertDead(t, pidFile)
			}
			want := map[string]float64{
				"isamatch_registry_credential_provider_runs_total{provider=" + tc.mode + ",result=" + tc.result + "}": 1,
				"isamatch_registry_credential_provider_duration_seconds_count{provider=" + tc.mode + "}":              1,
			}
			if diff := cmp.Diff(want, pluginSeries(t, m)); diff != "" {
				t.Errorf("credential provider metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// assertDead checks that the process whose pid is in pidFile is gone (or a
// zombie waiting for its reaper).
func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the plugin wrote no child pid: %v", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	// The kill is asynchronous to the child's exit: wait for it, bounded.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		s, err := os.ReadFile(stat)
		if err != nil {
			return
		}
		if _, rest, ok := strings.Cut(string(s), ") "); ok && strings.HasPrefix(rest, "Z") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the plugin's child %d still runs after the plugin timed out: %s", pid, s)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestCredentialCacheBounds(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	entry := []authEntry{{key: "r.example", username: "u", password: "p"}}
	size := int64(len("k1")+credentialEntryOverhead) + int64(len("r.example")+2) + credentialEntryOverhead
	tests := []struct {
		name       string
		maxEntries int
		maxBytes   int64
		want       []string // keys left after adding k1 (expires +3h), k2 (+1h), k3 (+2h)
	}{
		{name: "room for all", maxEntries: 10, maxBytes: 1 << 20, want: []string{"k1", "k2", "k3"}},
		{name: "entries: soonest expiry evicted", maxEntries: 2, maxBytes: 1 << 20, want: []string{"k1", "k3"}},
		{name: "bytes: soonest expiry evicted", maxEntries: 10, maxBytes: 2 * size, want: []string{"k1", "k3"}},
		{name: "entry larger than the cache not kept", maxEntries: 10, maxBytes: size - 1, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCredentialCache(tc.maxEntries, tc.maxBytes)
			// One namespace, allowed the whole cache.
			c.nsMaxEntries, c.nsMaxBytes = tc.maxEntries, tc.maxBytes
			c.add("ns", "k1", entry, nil, t0.Add(3*time.Hour))
			c.add("ns", "k2", entry, nil, t0.Add(time.Hour))
			c.add("ns", "k3", entry, nil, t0.Add(2*time.Hour))
			var got []string
			for _, k := range []string{"k1", "k2", "k3"} {
				if _, _, ok := c.get(k, t0); ok {
					got = append(got, k)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cached keys (-want +got):\n%s", diff)
			}
			if c.bytes > tc.maxBytes || c.len() > tc.maxEntries {
				t.Errorf("cache holds %d entries, %d bytes; limits %d, %d", c.len(), c.bytes, tc.maxEntries, tc.maxBytes)
			}
		})
	}
	c := newCredentialCache(10, 1<<20)
	c.add("ns", "k", entry, nil, t0.Add(time.Minute))
	if _, _, ok := c.get("k", t0.Add(time.Minute)); ok || c.len() != 0 || c.bytes != 0 {
		t.Errorf("expired entry still served or held: %d entries, %d bytes", c.len(), c.bytes)
	}
}

// TestCredentialCacheNamespaceQuota: a namespace past its share evicts its
// own entries; a full cache evicts from the namespace holding the most.
func TestCredentialCacheNamespaceQuota(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	entry := []authEntry{{key: "r.example", username: "u", password: "p"}}
	c := newCredentialCache(8, 1<<20) // 2 entries per namespace
	c.add("victim", "v", entry, nil, t0.Add(time.Minute))
	for i := range 10 {
		c.add("attacker", fmt.Sprint("a", i), entry, nil, t0.Add(time.Hour+time.Duration(i)))
	}
	for i := range 3 {
		c.add(fmt.Sprint("team-", i), fmt.Sprint("t", i), entry, nil, t0.Add(time.Hour))
	}
	var kept []string
	for _, k := range []string{"v", "a8", "a9", "t0", "t1", "t2"} {
		if _, _, ok := c.get(k, t0); ok {
			kept = append(kept, k)
		}
	}
	if diff := cmp.Diff([]string{"v", "a8", "a9", "t0", "t1", "t2"}, kept); diff != "" {
		t.Errorf("kept keys (-want +got):\n%s", diff)
	}
	if c.len() != 6 {
		t.Errorf("cache holds %d entries, want 6", c.len())
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
