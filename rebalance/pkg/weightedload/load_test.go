package weightedload

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

var (
	approx      = cmpopts.EquateApprox(0, 1e-9)
	cpuOnly     = vec{cpuDim: 1}
	allDims     = vec{1, 1, 1, 1}
	noSnapshot  = usage.Snapshot{}
	defaultTols = [3]float64{0.1, 0.05, 0.9} // tolerance, hysteresis, high
)

func testModel(loads []*load, weights vec) *model {
	return newModel(loads, weights, defaultTols[0], defaultTols[1], defaultTols[2])
}

func names(loads []*load) []string {
	var out []string
	for _, l := range loads {
		out = append(out, l.node.Name)
	}
	return out
}

func TestClusterAverageIsSizeWeighted(t *testing.T) {
	// 2 of 2 CPUs and 2 of 8: the plain mean of the shares is 62.5%, the
	// size-weighted average 40%.
	loads := []*load{
		newLoad(node("small", "2"), []*v1.Pod{pod("a", "small", "2")}, noSnapshot),
		newLoad(node("big", "8"), []*v1.Pod{pod("b", "big", "2"), pod("done", "big", "6", func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded })}, noSnapshot),
	}
	m := testModel(loads, cpuOnly)
	if diff := cmp.Diff(0.4, m.avg[cpuDim], approx); diff != "" {
		t.Errorf("average CPU share (-want +got):\n%s", diff)
	}
	var over []float64
	for _, l := range loads {
		over = append(over, m.over(l, cpuDim))
	}
	if diff := cmp.Diff([]float64{0.6, -0.15}, over, approx); diff != "" {
		t.Errorf("CPU share above the average (-want +got):\n%s", diff)
	}
}

// TestFormula checks the design source's formula over the four
// dimensions: L is the weighted mean of the shares, the score (1 - L)·10,
// a weight of 0 leaves a dimension out, and the balance index is 1 minus
// the weighted RMS distance from the averages.
func TestFormula(t *testing.T) {
	snap := usage.Snapshot{
		Nodes: map[string]usage.Usage{
			"a": {usage.CPU: 3000, usage.Memory: 8 << 30, usage.Network: 0.5, usage.Disk: 0.1},
			"b": {usage.CPU: 1000, usage.Memory: 8 << 30, usage.Network: 0.1, usage.Disk: 0.1},
		},
		Sources: map[usage.Dimension]usage.Source{usage.CPU: usage.Metrics, usage.Memory: usage.Metrics, usage.Network: usage.Prometheus, usage.Disk: usage.Prometheus},
	}
	a, b := newLoad(node("a", "4"), nil, snap), newLoad(node("b", "4"), nil, snap)
	for _, tc := range []struct {
		name                string
		weights             vec
		loadA, scoreA, balA float64
	}{
		// a: CPU 75%, memory 50%, network 50%, disk 10%; averages 50, 50, 30, 10.
		{"equal weights", allDims, (0.75 + 0.5 + 0.5 + 0.1) / 4, (1 - (0.75+0.5+0.5+0.1)/4) * 10, 1 - sqrtOf((0.25*0.25+0.2*0.2)/4)},
		{"CPU twice, disk left out", vec{2, 1, 1, 0}, (2*0.75 + 0.5 + 0.5) / 4, (1 - (2*0.75+0.5+0.5)/4) * 10, 1 - sqrtOf((2*0.25*0.25+0.2*0.2)/4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel([]*load{a, b}, tc.weights)
			got := []float64{m.nodeLoad(a), m.score(a), m.balance(a)}
			if diff := cmp.Diff([]float64{tc.loadA, tc.scoreA, tc.balA}, got, approx); diff != "" {
				t.Errorf("node a's load, score, balance index (-want +got):\n%s", diff)
			}
		})
	}
}

func sqrtOf(x float64) float64 {
	// Newton's method, so the test does not share the code's math.Sqrt call.
	r := x
	for range 50 {
		if r == 0 {
			return 0
		}
		r = (r + x/r) / 2
	}
	return r
}

// TestUsageOverRequests: a node whose pods use far more than they request
// is the loaded one when usage is measured, and the node whose pods
// request most when it is not. A node the Metrics API has no value for is
// judged by its requests; network and disk count only when every node was
// measured.
func TestUsageOverRequests(t *testing.T) {
	pods := []*v1.Pod{
		pod("burner", "uses", "200m"), pod("idler", "requests", "3"),
	}
	measured := usage.Snapshot{
		Nodes: map[string]usage.Usage{
			"uses": {usage.CPU: 3600, usage.Network: 0.2}, "requests": {usage.CPU: 300, usage.Network: 0.2}, "idle": {usage.CPU: 100},
		},
		Pods: map[types.NamespacedName]usage.Usage{
			{Namespace: "default", Name: "burner"}: {usage.CPU: 3500}, {Namespace: "default", Name: "idler"}: {usage.CPU: 200},
		},
		Sources: map[usage.Dimension]usage.Source{usage.CPU: usage.Metrics, usage.Network: usage.Prometheus},
	}
	build := func(snap usage.Snapshot, withIdle bool) []*load {
		out := []*load{newLoad(node("uses", "4"), pods[:1], snap), newLoad(node("requests", "4"), pods[1:], snap)}
		if withIdle {
			out = append(out, newLoad(node("idle", "4"), nil, snap))
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		loads       []*load
		wantQueue   []string
		wantSources []usage.Source // per node, CPU
		wantDims    []int
	}{
		{"requests", build(noSnapshot, true), []string{"requests"}, []usage.Source{usage.Requests, usage.Requests, usage.Requests}, []int{cpuDim, memDim}},
		{"measured", build(measured, true), []string{"uses"}, []usage.Source{usage.Metrics, usage.Metrics, usage.Metrics}, []int{cpuDim, memDim}},
		{"one node without metrics", func() []*load {
			snap := measured
			snap.Nodes = map[string]usage.Usage{"uses": measured.Nodes["uses"], "requests": measured.Nodes["requests"]}
			return build(snap, true)
		}(), []string{"uses"}, []usage.Source{usage.Metrics, usage.Metrics, usage.Requests}, []int{cpuDim, memDim}},
		{"network measured on every node", build(measured, false), []string{"uses"}, []usage.Source{usage.Metrics, usage.Metrics}, []int{cpuDim, memDim, netDim}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel(tc.loads, vec{1, 1, 1, 0})
			var sources []usage.Source
			for _, l := range tc.loads {
				sources = append(sources, l.source[cpuDim])
			}
			if diff := cmp.Diff(tc.wantSources, sources); diff != "" {
				t.Errorf("CPU source per node (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDims, m.dims()); diff != "" {
				t.Errorf("dimensions that count (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantQueue, names(m.queue(tc.loads))); diff != "" {
				t.Errorf("high-load queue (-want +got):\n%s", diff)
			}
		})
	}
	// The burner's move is planned with what it uses, not what it requests.
	if got := podUse(pods[0], measured)[cpuDim]; got != 3500 {
		t.Errorf("the burner's CPU use in the plan is %v, want 3500 (it requests 200)", got)
	}
}

// TestHysteresis: a measured dimension must be above the average by more
// than the tolerance plus the hysteresis before a node is queued, a
// requested one by more than the tolerance; once queued, a node sheds
// pods until it is within the tolerance.
func TestHysteresis(t *testing.T) {
	measure := func(cpu float64) usage.Snapshot {
		return usage.Snapshot{
			Nodes:   map[string]usage.Usage{"n": {usage.CPU: cpu}, "m": {usage.CPU: 2000}},
			Sources: map[usage.Dimension]usage.Source{usage.CPU: usage.Metrics},
		}
	}
	for _, tc := range []struct {
		name   string
		loads  []*load
		queued bool
	}{
		// Averages over two 4-CPU nodes, the other at 50%.
		{"measured, 12.5 points above", []*load{newLoad(node("n", "4"), nil, measure(3000)), newLoad(node("m", "4"), nil, measure(3000))}, false},
		{"measured, 16.25 points above", []*load{newLoad(node("n", "4"), nil, measure(3300)), newLoad(node("m", "4"), nil, measure(3300))}, true},
		{"requested, 12.5 points above", []*load{newLoad(node("n", "4"), []*v1.Pod{pod("p", "n", "3")}, noSnapshot), newLoad(node("m", "4"), []*v1.Pod{pod("q", "m", "2")}, noSnapshot)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel(tc.loads, cpuOnly)
			if got := m.queued(tc.loads[0]); got != tc.queued {
				t.Errorf("queued = %t, want %t (%.0f points above the average)", got, tc.queued, 100*m.over(tc.loads[0], cpuDim))
			}
		})
	}
}

func TestHighLoadQueue(t *testing.T) {
	// Average 12/24 = 50%. a: 3/4 (25 points above), b: 6/8 (25, over no
	// threshold), c: 3.8/4 (45 and above 90%), d: 0.2/8 (below), e: 2.2/4
	// (5 points, within the tolerance).
	loads := []*load{
		newLoad(node("a", "4"), []*v1.Pod{pod("a1", "a", "3")}, noSnapshot),
		newLoad(node("b", "8"), []*v1.Pod{pod("b1", "b", "6")}, noSnapshot),
		newLoad(node("c", "4"), []*v1.Pod{pod("c1", "c", "3800m")}, noSnapshot),
		newLoad(node("d", "8"), []*v1.Pod{pod("d1", "d", "200m")}, noSnapshot),
		newLoad(node("e", "4"), []*v1.Pod{pod("e1", "e", "2200m")}, noSnapshot),
	}
	m := newModel(loads, cpuOnly, 0.1, 0.05, 1)
	if diff := cmp.Diff([]string{"c", "a", "b"}, names(m.queue(loads))); diff != "" {
		t.Errorf("queue, worst first, ties by name (-want +got):\n%s", diff)
	}
	// A node above the threshold jumps ahead of a worse one.
	loads = []*load{
		newLoad(node("worse", "2"), []*v1.Pod{pod("w", "worse", "1800m")}, noSnapshot), // 90%, not above
		newLoad(node("hot", "100"), []*v1.Pod{pod("h", "hot", "91")}, noSnapshot),      // 91%
		newLoad(node("idle", "100"), nil, noSnapshot),
	}
	if diff := cmp.Diff([]string{"hot", "worse"}, names(testModel(loads, cpuOnly).queue(loads))); diff != "" {
		t.Errorf("queue with a node above 90%% (-want +got):\n%s", diff)
	}
}

func TestEvictionOrderAndMovable(t *testing.T) {
	pods := []*v1.Pod{
		pod("always-guaranteed", "n", "1", guaranteed),
		pod("always-burstable-small", "n", "500m"),
		pod("always-burstable-big", "n", "1"),
		pod("onfailure-guaranteed", "n", "1", restart(v1.RestartPolicyOnFailure), guaranteed),
		pod("onfailure-burstable", "n", "1", restart(v1.RestartPolicyOnFailure)),
		pod("never", "n", "1", restart(v1.RestartPolicyNever)),
		pod("local-storage", "n", "1", emptyDir),
		pod("best-effort", "n", "0"),
	}
	use := func(p *v1.Pod) vec { return podUse(p, noSnapshot) }
	var got []string
	for _, p := range slices.SortedFunc(slices.Values(slices.DeleteFunc(slices.Clone(pods), func(p *v1.Pod) bool { return !movable(p) })), evictionOrder(use)) {
		got = append(got, p.Name)
	}
	want := []string{"onfailure-burstable", "onfailure-guaranteed", "always-burstable-big", "always-burstable-small", "always-guaranteed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("movable pods in eviction order (-want +got):\n%s", diff)
	}
}

// A move the scheduler's default spreading would undo is not planned: the
// target must run no more of the pod's siblings than the source will.
func TestSpreadAllows(t *testing.T) {
	bare := func(p *v1.Pod) { p.OwnerReferences = nil }
	for _, tc := range []struct {
		name     string
		src, dst []*v1.Pod
		want     bool
	}{
		{name: "target runs fewer siblings", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: nil, want: true},
		{name: "target runs as many as the source will", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: []*v1.Pod{pod("c", "d", "1")}, want: true},
		{name: "target runs more than the source will", src: []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}, dst: []*v1.Pod{pod("c", "d", "1"), pod("e", "d", "1")}, want: false},
		{name: "a bare pod has no siblings", src: []*v1.Pod{pod("a", "s", "1", bare)}, dst: []*v1.Pod{pod("c", "d", "1"), pod("e", "d", "1")}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := newLoad(node("s", "4"), tc.src, noSnapshot), newLoad(node("d", "4"), tc.dst, noSnapshot)
			if got := src.spreadAllows(tc.src[0], dst); got != tc.want {
				t.Errorf("spreadAllows = %t, want %t (source %v, target %v)", got, tc.want, src.owners, dst.owners)
			}
		})
	}
	src, dst := newLoad(node("s", "4"), []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1"), pod("c", "s", "1")}, noSnapshot), newLoad(node("d", "4"), nil, noSnapshot)
	src.move(pod("a", "s", "1"), requests(pod("a", "s", "1")), dst)
	if !src.spreadAllows(pod("b", "s", "1"), dst) || src.spreadAllows(pod("c", "s", "1"), newLoad(node("x", "4"), []*v1.Pod{pod("x1", "x", "1"), pod("x2", "x", "1")}, noSnapshot)) {
		t.Errorf("after one planned move the counts are %v and %v", src.owners, dst.owners)
	}
}

// A move to a node of another zone must also leave the target's zone with
// no more of the pod's siblings than the source's will have: the
// scheduler spreads them over zones too. Nodes without a zone, or of one
// zone, are judged by their own counts alone.
func TestSpreadAllowsZones(t *testing.T) {
	in := func(zone string, n *v1.Node) *v1.Node {
		if zone != "" {
			n.Labels[v1.LabelTopologyZone] = zone
		}
		return n
	}
	for _, tc := range []struct {
		name string
		// the source s runs two siblings; the target d none; x is d's
		// neighbour, running xPods siblings
		srcZone, dstZone, xZone string
		xPods                   int
		want                    bool
	}{
		{"target's zone runs fewer", "a", "b", "b", 0, true},
		{"target's zone runs as many as the source's will", "a", "b", "b", 1, true},
		{"target's zone runs more than the source's will", "a", "b", "b", 2, false},
		{"same zone: the zone's count does not change", "a", "a", "a", 5, true},
		{"target without a zone", "a", "", "b", 5, true},
		{"source without a zone", "", "b", "b", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []*v1.Pod{pod("a", "s", "1"), pod("b", "s", "1")}
			var x []*v1.Pod
			for k := range tc.xPods {
				x = append(x, pod(fmt.Sprintf("x%d", k), "x", "1"))
			}
			loads := []*load{
				newLoad(in(tc.srcZone, node("s", "4")), src, noSnapshot),
				newLoad(in(tc.dstZone, node("d", "4")), nil, noSnapshot),
				newLoad(in(tc.xZone, node("x", "4")), x, noSnapshot),
			}
			shareZones(loads)
			if got := loads[0].spreadAllows(src[0], loads[1]); got != tc.want {
				t.Errorf("spreadAllows = %t, want %t (zones %v and %v)", got, tc.want, loads[0].zoneOwners, loads[1].zoneOwners)
			}
		})
	}
	// A planned move counts in both zones.
	a, b := newLoad(in("a", node("s", "4")), []*v1.Pod{pod("p1", "s", "1"), pod("p2", "s", "1"), pod("p3", "s", "1")}, noSnapshot), newLoad(in("b", node("d", "4")), nil, noSnapshot)
	shareZones([]*load{a, b})
	a.move(pod("p1", "s", "1"), requests(pod("p1", "s", "1")), b)
	if a.zoneOwners["rs-uid"] != 2 || b.zoneOwners["rs-uid"] != 1 {
		t.Errorf("after one planned move the zones count %v and %v, want 2 and 1", a.zoneOwners, b.zoneOwners)
	}
}
