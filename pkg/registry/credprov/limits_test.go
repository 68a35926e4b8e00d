package credprov

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
)

// TestCredentialProviderLimits runs real plugins, built once, against the
// attacks on the plugin runtime: fan-out over many hosts, repeated
// failures, cache flooding and children left behind.
func TestCredentialProviderLimits(t *testing.T) {
	bin := buildTestPlugin(t, "ecr", "fail")
	t.Run("fan-out bounded", func(t *testing.T) { testPluginFanOut(t, bin) })
	t.Run("failures cached", func(t *testing.T) { testPluginFailuresCached(t, bin) })
	t.Run("namespace cache quota", func(t *testing.T) { testPluginCacheQuota(t, bin) })
	t.Run("children killed on exit", func(t *testing.T) { testPluginChildrenKilled(t, bin) })
}

// resolveIn resolves image with k as a resolution for namespace does.
func resolveIn(ctx context.Context, k *Keychain, namespace, image string) error {
	ref, err := name.NewRepository(image)
	if err != nil {
		return err
	}
	_, err = k.ResolveContext(slots.WithNamespace(ctx, namespace), ref)
	return err
}

// ecrHost is the i-th of many ECR hosts one matchImages pattern covers
// (any account id matches).
func ecrHost(i int) string {
	return fmt.Sprintf("%012d.dkr.ecr.us-east-1.amazonaws.com", 100000000000+i)
}

// maxConcurrency is the largest number of plugin runs one run saw in
// progress, from the plugin's concurrency file.
func maxConcurrency(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, n)
	}
	return most
}

// Images on many hosts that match one provider, in several namespaces at
// once, run at most the global number of plugins at a time, and one
// namespace at most its own share.
func testPluginFanOut(t *testing.T, bin string) {
	tests := []struct {
		name       string
		namespaces int
		hosts      int
		want       int // most plugin runs at once
	}{
		{name: "3 namespaces x 16 hosts: global bound", namespaces: 3, hosts: 16, want: DefaultMaxRuns},
		{name: "1 namespace x 16 hosts: namespace bound", namespaces: 1, hosts: 16, want: DefaultMaxRunsPerNamespace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			running := filepath.Join(dir, "running")
			if err := os.Mkdir(running, 0o700); err != nil {
				t.Fatal(err)
			}
			conc := filepath.Join(dir, "concurrency")
			kc := newTestProviders(t, bin, Options{Timeout: time.Minute},
				testProvider{name: "ecr", mode: "ok", match: "*.dkr.ecr.*.amazonaws.com", defaultCache: "1h",
					env: map[string]string{"TEST_USERNAME": "AWS", "TEST_PASSWORD": "p", "TEST_RUNNING_DIR": running,
						"TEST_CONCURRENCY_FILE": conc, "TEST_SLEEP": "300ms"}})
			var wg sync.WaitGroup
			errs := make(chan error, tc.namespaces*tc.hosts)
			for ns := range tc.namespaces {
				for h := range tc.hosts {
					wg.Go(func() {
						errs <- resolveIn(t.Context(), kc, fmt.Sprintf("tenant-%d", ns), ecrHost(ns*tc.hosts+h)+"/app")
					})
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("ResolveContext: %v", err)
				}
			}
			if got := maxConcurrency(t, conc); got > tc.want {
				t.Errorf("%d plugin processes ran at once, want at most %d", got, tc.want)
			}
		})
	}
}

// A failing plugin is asked once per registry within the failure TTL,
// not once per resolution.
func testPluginFailuresCached(t *testing.T, bin string) {
	clock := testingclock.NewFakeClock(time.Unix(1e9, 0))
	count := filepath.Join(t.TempDir(), "runs")
	kc := newTestProviders(t, bin, Options{now: clock.Now},
		testProvider{name: "fail", mode: "fail", match: "*.example", defaultCache: "1h", env: map[string]string{"TEST_COUNT_FILE": count}})
	steps := []struct {
		advance time.Duration
		image   string
	}{
		{0, "a.example/app"}, {0, "a.example/app"}, {0, "a.example/other"}, {time.Second, "a.example/app"},
		{failureTTL, "a.example/app"},
	}
	for _, s := range steps {
		clock.Step(s.advance)
		if err := resolveIn(t.Context(), kc, "team", s.image); err == nil || !strings.Contains(err.Error(), "credential provider fail failed") {
			t.Fatalf("ResolveContext(%s) = %v, want the plugin's failure", s.image, err)
		}
	}
	if diff := cmp.Diff([]string{"a.example/app", "a.example/app"}, runs(t, count)); diff != "" {
		t.Errorf("plugin runs (-want +got):\n%s", diff)
	}
}

// One namespace filling the credential cache with its own hosts does not
// evict another namespace's entry, even one closer to expiry.
func testPluginCacheQuota(t *testing.T, bin string) {
	clock := testingclock.NewFakeClock(time.Unix(1e9, 0))
	count := filepath.Join(t.TempDir(), "runs")
	kc := newTestProviders(t, bin, Options{now: clock.Now, cacheEntries: 8, cacheBytes: 1 << 20},
		testProvider{name: "ecr", mode: "ok", match: "*.dkr.ecr.*.amazonaws.com", defaultCache: "1h",
			env: map[string]string{"TEST_USERNAME": "AWS", "TEST_PASSWORD": "p", "TEST_COUNT_FILE": count}})
	victim := ecrHost(0) + "/app"
	if err := resolveIn(t.Context(), kc, "victim", victim); err != nil {
		t.Fatal(err)
	}
	clock.Step(time.Minute) // the victim's entry now expires first
	for h := 1; h <= 16; h++ {
		if err := resolveIn(t.Context(), kc, "attacker", ecrHost(h)+"/app"); err != nil {
			t.Fatal(err)
		}
	}
	if err := resolveIn(t.Context(), kc, "victim", victim); err != nil {
		t.Fatal(err)
	}
	if n := slices.Index(runs(t, count), victim); n != 0 || strings.Count(strings.Join(runs(t, count), " "), victim) != 1 {
		t.Errorf("plugin runs %q: want the victim's image %s run once, its answer kept", runs(t, count), victim)
	}
}

// A plugin that answers and exits, leaving a child behind, has its process
// group killed: no helper outlives the run.
func testPluginChildrenKilled(t *testing.T, bin string) {
	pids := filepath.Join(t.TempDir(), "children")
	env := map[string]string{"TEST_USERNAME": "u", "TEST_PASSWORD": "p", "TEST_CHILD_PID_FILE": pids}
	kc := newTestProviders(t, bin, Options{},
		testProvider{name: "ecr", mode: "ok", match: "*.ok.example", defaultCache: "0s", env: env},
		testProvider{name: "fail", mode: "fail", match: "*.bad.example", defaultCache: "0s", env: env})
	if err := resolveIn(t.Context(), kc, "team", "r.ok.example/app"); err != nil {
		t.Fatal(err)
	}
	if err := resolveIn(t.Context(), kc, "team", "r.bad.example/app"); err == nil {
		t.Fatal("ResolveContext with a failing plugin succeeded")
	}
	data, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	children := strings.Fields(string(data))
	if len(children) != 2 {
		t.Fatalf("children %q, want one per run", children)
	}
	for _, pid := range children {
		one := filepath.Join(t.TempDir(), "pid")
		writeFile(t, one, []byte(pid))
		assertDead(t, one)
	}
}
