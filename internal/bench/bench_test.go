package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

func TestClassifyPath(t *testing.T) {
	cases := []struct {
		name, path string
		want       RequestKey
	}{
		{"ping", "/v2/", RequestKey{Kind: KindPing}},
		{"index by tag", "/v2/bench/cold/manifests/r0-a-001", RequestKey{Repo: "bench/cold", Kind: KindTagManifest, Tag: "r0-a-001"}},
		{"manifest by digest", "/v2/bench/cold/manifests/sha256:abc", RequestKey{Repo: "bench/cold", Kind: KindDigest}},
		{"blob", "/v2/a/b/c/blobs/sha256:abc", RequestKey{Repo: "a/b/c", Kind: KindBlob}},
		{"repo named like a kind", "/v2/blobs/manifests/v1", RequestKey{Repo: "blobs", Kind: KindTagManifest, Tag: "v1"}},
		{"not the API", "/healthz", RequestKey{Kind: KindOther}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ClassifyPath(tc.path)); diff != "" {
				t.Errorf("ClassifyPath(%q) (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}

func TestPerImage(t *testing.T) {
	delta := map[RequestKey]int{
		{Repo: ColdRepo, Kind: KindTagManifest, Tag: "r0-a-000"}: 1,
		{Repo: ColdRepo, Kind: KindTagManifest, Tag: "r0-a-001"}: 2,
		{Repo: ColdRepo, Kind: KindDigest}:                       6,
		{Repo: ColdRepo, Kind: KindBlob}:                         6,
		{Repo: "bench/app", Kind: KindBlob}:                      9,
		{Kind: KindPing}:                                         4,
	}
	cases := []struct {
		name           string
		images         int
		wantLo, wantHi int
		wantTotal      float64
	}{
		{"both images", 2, 1, 2, 7.5},
		{"an image never fetched", 3, 0, 2, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, total := perImage(delta, "r0-a", tc.images)
			if diff := cmp.Diff([]float64{float64(tc.wantLo), float64(tc.wantHi), tc.wantTotal}, []float64{float64(lo), float64(hi), total}); diff != "" {
				t.Errorf("perImage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStats(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond
	}
	cases := []struct {
		name      string
		got, want float64
	}{
		{"median odd", Median([]float64{3, 1, 2}), 2},
		{"median even", Median([]float64{4, 1, 3, 2}), 2.5},
		{"median empty", Median(nil), 0},
		{"p50 nearest rank", ms(Percentile(ds, 0.5)), 50},
		{"p99 nearest rank", ms(Percentile(ds, 0.99)), 99},
		{"p100", ms(Percentile(ds, 1)), 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestParseHistSums(t *testing.T) {
	text := `# HELP apiserver_admission_webhook_admission_duration_seconds x
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="pods.isa.isamatch.io",operation="CREATE",le="0.005"} 3
apiserver_admission_webhook_admission_duration_seconds_bucket{name="pods.isa.isamatch.io",operation="CREATE",le="+Inf"} 100
apiserver_admission_webhook_admission_duration_seconds_sum{name="pods.isa.isamatch.io",operation="CREATE"} 0.5
apiserver_admission_webhook_admission_duration_seconds_count{name="pods.isa.isamatch.io",operation="CREATE"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="other",operation="CREATE",le="+Inf"} 9
apiserver_admission_webhook_admission_duration_seconds_sum{name="other",operation="CREATE"} 9
apiserver_admission_webhook_admission_duration_seconds_count{name="other",operation="CREATE"} 9
`
	got, err := ParseHistSums(strings.NewReader(text), "apiserver_admission_webhook_admission_duration_seconds", map[string]string{"name": "pods.isa.isamatch.io"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(HistSums{Sum: 0.5, Count: 100}, got); diff != "" {
		t.Errorf("ParseHistSums (-want +got):\n%s", diff)
	}
	if m := got.Sub(HistSums{Sum: 0.25, Count: 50}).Mean(); m != 0.005 {
		t.Errorf("mean of the difference = %v, want 0.005", m)
	}
}

// TestGroupISAs checks the node sets the rows build: distinct groups, and
// every request of the load mix served by the first 20 groups.
func TestGroupISAs(t *testing.T) {
	for _, n := range []int{20, 50, 200, 265} {
		t.Run(fmt.Sprintf("%d groups", n), func(t *testing.T) {
			gs, err := GroupISAs(n)
			if err != nil {
				t.Fatal(err)
			}
			inv := inventory.NewStatic(NodeSet("n", 2*n, gs))
			if got := len(inv.Snapshot().Groups); got != n {
				t.Errorf("inventory groups = %d, want %d", got, n)
			}
		})
	}
	if _, err := GroupISAs(266); err == nil {
		t.Error("GroupISAs(266): want an error, there are 265 ISAs")
	}
	gs, err := GroupISAs(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range requestMix {
		if r == "" {
			continue
		}
		rq, err := isa.ParseRequest(r)
		if err != nil {
			t.Fatalf("request %q: %v", r, err)
		}
		served := false
		for _, g := range gs {
			if slices.ContainsFunc(rq.Alternatives, func(a isa.ISA) bool { return isa.Satisfies(g, a) }) {
				served = true
			}
		}
		if !served {
			t.Errorf("request %q: no group of GroupISAs(20) serves it", r)
		}
	}
}

// TestParseProc: the /proc readers take CPU time and resident memory from
// real files' text, a command name with spaces and parentheses included.
func TestParseProc(t *testing.T) {
	// /proc/<pid>/stat of a webhook whose command name holds ") (".
	stat := "4242 (web) (hook 2) S 1 4242 4242 0 -1 4194560 12000 0 3 0 250 125 0 0 20 0 12 0 9000 1500000000 20000 18446744073709551615 1 1 0 0 0 0 0 0 2146171647 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	got, err := parseCPUTime(stat)
	if err != nil || got != 3750*time.Millisecond {
		t.Errorf("parseCPUTime = %v, %v; want 3.75s (250 + 125 ticks)", got, err)
	}
	for _, bad := range []string{"4242 (web S 1", "4242 (web) S 1 2 3", "4242 (web) S 1 4242 4242 0 -1 4194560 12000 0 3 0 x 125 0"} {
		if _, err := parseCPUTime(bad); err == nil {
			t.Errorf("parseCPUTime(%q): no error", bad)
		}
	}
	status := "Name:\twebhook\nVmPeak:\t  812345 kB\nVmRSS:\t   61234 kB\nRssAnon:\t   40000 kB\nRssFile:\t   21234 kB\nRssShmem:\t       0 kB\n"
	m, err := parseMemStatus(strings.NewReader(status))
	if diff := cmp.Diff(MemStatus{VmRSS: 61234, RssAnon: 40000, RssFile: 21234}, m); err != nil || diff != "" {
		t.Errorf("parseMemStatus: %v (-want +got):\n%s", err, diff)
	}
	if _, err := parseMemStatus(strings.NewReader("Name:\tkthreadd\n")); err == nil {
		t.Error("parseMemStatus of a status without VmRSS: no error")
	}
}

// BenchmarkProcReaders reads this process's CPU time and resident memory
// from /proc, as the cluster benchmark samples the webhook's, and reports
// the last reading (cpu-ms, rss-KiB).
func BenchmarkProcReaders(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("no /proc")
	}
	var cpu time.Duration
	var m MemStatus
	for b.Loop() {
		var err error
		if cpu, err = CPUTime(os.Getpid()); err != nil {
			b.Fatal(err)
		}
		if m, err = ReadMemStatus(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms")
	b.ReportMetric(float64(m.VmRSS), "rss-KiB")
}
