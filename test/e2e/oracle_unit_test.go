package e2e

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/internal/testbed"
)

// hostTruths builds every node kind's host root and reads its ground truth.
func hostTruths(t *testing.T) map[string]simNode {
	t.Helper()
	repo, err := testbed.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]simNode{}
	for _, k := range nodeKinds {
		dir := filepath.Join(t.TempDir(), k.name)
		if err := writeHostRoot(repo, dir, k); err != nil {
			t.Fatalf("host root %s: %v", k.name, err)
		}
		tr, err := oracle.ReadHost(dir)
		if err != nil {
			t.Fatalf("ground truth %s: %v", k.name, err)
		}
		if tr.Native.Arch != k.arch {
			t.Errorf("%s: ground truth arch %s, kind says %s", k.name, tr.Native.Arch, k.arch)
		}
		out[k.name] = simNode{spec: experiment.NodeSpec{Name: k.name, Arch: k.arch, MilliCPU: 8000, MemMi: 16384}, kind: k.name, zone: "zone-a", truth: tr}
	}
	return out
}

func TestGroundTruthOfNodeKinds(t *testing.T) {
	nodes := hostTruths(t)
	tests := []struct {
		node, need string
		emulated   bool
		want       bool
	}{
		{"x86-64-v2", "x86-64-v2", false, true},
		{"x86-64-v2", "x86-64-v3", false, false},
		{"x86-64-v3", "x86-64-v3", false, true},
		{"x86-64-v3", "x86-64-v4", false, false},
		{"x86-64-v4", "x86-64-v4", false, true},
		{"arm64", "arm64+sve", false, false},
		{"arm64-sve", "arm64+sve", false, true},
		{"rv64gc", "rv64gc", false, true},
		{"rv64gc", "rv64gcv", false, false},
		{"rv64gcv", "rv64gcv", false, true},
		{"rva22u64", "rva22u64", false, true},
		{"rva22u64", "rva23u64", false, false},
		{"rva23u64", "rva23u64", false, true},
		{"imfd", "rv64imfd", false, true},
		{"imfd", "rv64imfdv", false, false},
		{"imfv", "rv64imfdv", false, true},
		{"imfdv", "rv64imfdv", false, true},
		{"th1520", "rv64gc_xtheadvector", false, true},
		{"th1520", "rv64gcv", false, false},
		{"x86-64-v3-cross-imfdv", "rv64imfdv", true, true},
		{"x86-64-v4-cross-gcv", "rv64gcv", true, true},
		{"x86-64-v4-cross-gcv", "rv64imfdv", true, true},
		{"arm64-cross-gc", "rv64gcv", true, false},
		{"x86-64-v3", "rv64gc", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.node+" runs "+tc.need, func(t *testing.T) {
			need, err := oracle.Parse(tc.need)
			if err != nil {
				t.Fatal(err)
			}
			n := nodes[tc.node]
			got := oracle.Satisfies(n.truth.Native, need)
			if tc.emulated {
				got = false
				for _, e := range n.truth.Emulated {
					got = got || oracle.Satisfies(e, need)
				}
			}
			if got != tc.want {
				t.Errorf("%s (native %s, emulated %v) satisfies %s (emulated %v) = %v, want %v",
					tc.node, n.truth.Native.String(), n.truth.Emulated, tc.need, tc.emulated, got, tc.want)
			}
		})
	}
	distinct := map[string]bool{}
	for _, n := range nodes {
		distinct[n.truth.Native.String()] = true
	}
	if len(distinct) < 10 {
		t.Errorf("node kinds have %d distinct native ISAs, want at least 10", len(distinct))
	}
}

func TestFitOracle(t *testing.T) {
	nodes := hostTruths(t)
	tests := []struct {
		name   string
		pod    randPod
		node   string
		wantOK bool
		// wantScore < 0: not checked.
		wantScore float64
	}{
		{"plain multi-arch image runs anywhere", randPod{image: image("rand/multi")}, "imfd", true, -1},
		{"plain riscv image not on x86", randPod{image: image("rand/riscv")}, "x86-64-v4", false, 0},
		{"x86-64-v3 image needs v3", randPod{image: image("rand/x86-v3")}, "x86-64-v2", false, 0},
		{"x86-64-v3 image on v4", randPod{image: image("rand/x86-v3")}, "x86-64-v4", true, -1},
		{"rva22 variant on an rva23 node", randPod{image: image("rand/variants")}, "rva23u64", true, -1},
		{"rva22 variant not on rv64gc", randPod{image: image("rand/variants")}, "rv64gc", false, 0},
		{"label rv64gcv on the TH1520", randPod{image: image("rand/rvv-label")}, "th1520", false, 0},
		{"label xtheadvector on the TH1520", randPod{image: image("rand/thead-label")}, "th1520", true, -1},
		{"request alternative arm64+sve", randPod{image: image("rand/multi"), request: "x86-64-v3 | arm64+sve"}, "arm64-sve", true, -1},
		{"request alternatives exclude plain arm64", randPod{image: image("rand/multi"), request: "x86-64-v3 | arm64+sve"}, "arm64", false, 0},
		{"paper: imfd request on imfd node", randPod{image: image("rand/multi"), request: "rv64imfd"}, "imfd", true, -1},
		{"qemu on the emulating x86 master ranks 2", randPod{image: image("rand/cross"), qemu: "rv64imfdv"}, "x86-64-v3-cross-imfdv", true, 2},
		{"qemu emulation needs a native image platform", randPod{image: image("rand/cross"), qemu: "rv64gc"}, "arm64-cross-gc", false, 0},
		{"qemu native fallback", randPod{image: image("rand/cross"), qemu: "rv64imfdv"}, "imfdv", true, -1},
		{"qemu without emulation or native support", randPod{image: image("rand/cross"), qemu: "rv64imfdv"}, "x86-64-v4", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, score := fit(tc.pod, nodes[tc.node])
			if ok != tc.wantOK {
				t.Fatalf("fit(%s on %s) ok = %v, want %v", tc.pod.describe(), tc.node, ok, tc.wantOK)
			}
			if tc.wantScore >= 1 && score != tc.wantScore {
				t.Errorf("fit(%s on %s) score = %v, want %v", tc.pod.describe(), tc.node, score, tc.wantScore)
			}
		})
	}
	// The paper's worked example: an IMFD task fits the IMFD node better
	// than the IMFDV node; emulation ranks above any native node.
	imfd := randPod{image: image("rand/multi"), request: "rv64imfd"}
	_, s3 := fit(imfd, nodes["imfd"])
	_, s5 := fit(imfd, nodes["imfdv"])
	if s3 <= s5 {
		t.Errorf("IMFD task: fit on imfd %v not above imfdv %v", s3, s5)
	}
	// Native scores are shares: in (0, 1] on every node that can run the
	// pod (plain images rank as their architecture's base ISA).
	for _, img := range randomImages {
		for _, n := range nodes {
			if ok, s := fit(randPod{image: img}, n); ok && (s <= 0 || s > 1) {
				t.Errorf("fit(%s on %s) = %v, want a share in (0, 1]", img.Repo, n.kind, s)
			}
		}
	}
	cross := randPod{image: image("rand/cross"), qemu: "rv64imfdv"}
	_, e := fit(cross, nodes["x86-64-v3-cross-imfdv"])
	_, n := fit(cross, nodes["imfdv"])
	if e <= n || n <= 0 || n > 1 {
		t.Errorf("cross task: emulation %v, native %v: want emulation above a native score in (0, 1]", e, n)
	}
}

func TestJudge(t *testing.T) {
	all := hostTruths(t)
	imfd, imfdv, x86 := all["imfd"], all["imfdv"], all["x86-64-v4"]
	imfd.spec.MilliCPU = 1000
	nodes := []simNode{imfd, imfdv, x86}
	pod := func(name string, cpu int64) randPod {
		return randPod{name: name, image: image("rand/multi"), request: "rv64imfd", milliCPU: cpu, memMi: 10}
	}
	zoned := pod("zoned", 100)
	zoned.zones = []string{"zone-b"}
	pods := []randPod{pod("a", 600), pod("b", 600), pod("c", 100), pod("wrong", 100), pod("stranded", 100), zoned}
	placed := map[string]string{"a": "imfd", "b": "imfdv", "c": "imfdv", "wrong": "x86-64-v4", "zoned": "imfdv"}
	v := judge(nodes, pods, placed, []string{"a", "b", "c", "wrong", "zoned"})
	// a: best (imfd). b: imfd full for 600m, imfdv is the best with room.
	// c: imfd still has 400m: imfdv is not best fit. zoned: no node is in
	// zone-b, so not eligible and widened.
	if len(v.Wrong) != 1 || len(v.Stranded) != 1 || len(v.Widened) != 1 {
		t.Errorf("wrong %v, stranded %v, widened %v: want one each", v.Wrong, v.Stranded, v.Widened)
	}
	if v.Eligible != 4 || v.BestFit != 2 {
		t.Errorf("best fit %d of %d eligible, want 2 of 4 (a, b): off %v", v.BestFit, v.Eligible, v.OffBestFit)
	}

	// A pod the watch saw bound before one the scheduler had already put on
	// the best node: counted off best fit, but explained as in flight.
	first, second := pod("first", 600), pod("second", 600)
	v = judge([]simNode{imfd, imfdv}, []randPod{first, second}, map[string]string{"first": "imfdv", "second": "imfd"}, []string{"first", "second"})
	if v.BestFit != 1 || v.Eligible != 2 || v.InFlight != 1 {
		t.Errorf("best fit %d of %d, in flight %d: want 1 of 2, 1 in flight (%v)", v.BestFit, v.Eligible, v.InFlight, v.OffBestFit)
	}

	// Alternatives of different architectures are equally good: best fit
	// is judged within the architecture of the node the pod got.
	arm, armSVE := all["arm64"], all["arm64-sve"]
	nodes = []simNode{imfd, arm, armSVE}
	either := randPod{name: "either", image: image("rand/multi"), request: "rv64imfd | arm64", milliCPU: 100, memMi: 10}
	tests := []struct {
		node        string
		wantBestFit int
	}{
		{"arm64", 1},     // the closest arm64 node, though imfd fits the riscv alternative better
		{"arm64-sve", 0}, // plain arm64 had room and fits the arm64 alternative better
		{"imfd", 1},
	}
	for _, tc := range tests {
		v := judge(nodes, []randPod{either}, map[string]string{"either": tc.node}, []string{"either"})
		if v.Eligible != 1 || v.BestFit != tc.wantBestFit {
			t.Errorf("either on %s: best fit %d of %d, want %d of 1 (%v)", tc.node, v.BestFit, v.Eligible, tc.wantBestFit, v.OffBestFit)
		}
	}
}

func TestRandomWorkloadIsSeededAndVaried(t *testing.T) {
	nodes := randomNodes(rand.New(rand.NewPCG(1, 2)), 60)
	a := randomPods(rand.New(rand.NewPCG(3, 4)), 1000, nodes)
	b := randomPods(rand.New(rand.NewPCG(3, 4)), 1000, nodes)
	kinds := map[string]int{}
	for i := range a {
		if a[i].describe() != b[i].describe() || a[i].milliCPU != b[i].milliCPU {
			t.Fatalf("pod %d differs between runs with one seed", i)
		}
		switch {
		case a[i].qemu != "":
			kinds["qemu"]++
		case a[i].request != "":
			kinds["request"]++
		case a[i].claimsISA():
			kinds["image ISA"]++
		default:
			kinds["plain"]++
		}
		if len(a[i].zones)+len(a[i].notHosts) > 0 || a[i].archSelector != "" {
			kinds["user affinity"]++
		}
	}
	for _, k := range []string{"qemu", "request", "image ISA", "plain", "user affinity"} {
		if kinds[k] < 50 {
			t.Errorf("only %d pods of kind %q in 1000: %v", kinds[k], k, kinds)
		}
	}
}
