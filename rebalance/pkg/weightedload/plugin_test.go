package weightedload

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/fake"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// fakeCluster is the handle Balance runs against; its evictor records and
// removes the pods.
type fakeCluster struct {
	fake.HandleImpl
	pods    []*v1.Pod
	evicted []string
}

func (c *fakeCluster) Filter(*v1.Pod) bool             { return true }
func (c *fakeCluster) PreEvictionFilter(*v1.Pod) bool  { return true }
func (c *fakeCluster) Evictor() frameworktypes.Evictor { return c }

func (c *fakeCluster) Evict(_ context.Context, pod *v1.Pod, _ evictions.EvictOptions) error {
	c.evicted = append(c.evicted, pod.Name)
	c.pods = slices.DeleteFunc(c.pods, func(p *v1.Pod) bool { return p.UID == pod.UID })
	return nil
}

func tiered(best, next string) func(*v1.Pod) {
	term := func(w int32, g string) v1.PreferredSchedulingTerm {
		return v1.PreferredSchedulingTerm{Weight: w, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: isa.GroupLabel, Operator: v1.NodeSelectorOpIn, Values: []string{g}},
		}}}
	}
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			term(100, best), term(40, next),
		}}}
	}
}

func TestBalance(t *testing.T) {
	grouped := func(n *v1.Node, g string) *v1.Node { n.Labels[isa.GroupLabel] = g; return n }
	for _, tc := range []struct {
		name string
		args WeightedLoadArgs
		pods []*v1.Pod
		want []string
	}{{
		// Average 4/8: a at 100% sheds two pods to reach 50%, b takes them.
		name: "moves until the node is back within the tolerance",
		args: WeightedLoadArgs{MaxEvictionsPerNode: 10},
		pods: []*v1.Pod{pod("p1", "a", "1"), pod("p2", "a", "1"), pod("p3", "a", "1"), pod("p4", "a", "1")},
		want: []string{"p1", "p2"},
	}, {
		name: "per-node limit",
		args: WeightedLoadArgs{MaxEvictionsPerNode: 1},
		pods: []*v1.Pod{pod("p1", "a", "1"), pod("p2", "a", "1"), pod("p3", "a", "1"), pod("p4", "a", "1")},
		want: []string{"p1"},
	}, {
		name: "never restartPolicy Never or local storage; OnFailure first",
		args: WeightedLoadArgs{MaxEvictionsPerNode: 10},
		pods: []*v1.Pod{
			pod("always", "a", "1"), pod("never", "a", "1", restart(v1.RestartPolicyNever)),
			pod("scratch", "a", "1", emptyDir), pod("onfailure", "a", "1", restart(v1.RestartPolicyOnFailure)),
		},
		want: []string{"onfailure", "always"},
	}, {
		name: "never to a worse isamatch tier",
		args: WeightedLoadArgs{MaxEvictionsPerNode: 10},
		pods: []*v1.Pod{
			pod("t1", "a", "1", tiered("g-a", "g-b")), pod("t2", "a", "1", tiered("g-a", "g-b")),
			pod("t3", "a", "1", tiered("g-a", "g-b")), pod("t4", "a", "1", tiered("g-a", "g-b")),
		},
		want: nil,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCluster{pods: tc.pods}
			c.GetPodsAssignedToNodeFuncImpl = func(name string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
				return podsOnFunc(c.pods)(name, filter)
			}
			args := tc.args
			SetDefaultsWeightedLoadArgs(&args)
			if err := ValidateWeightedLoadArgs(&args); err != nil {
				t.Fatal(err)
			}
			p, err := New(t.Context(), &args, c)
			if err != nil {
				t.Fatal(err)
			}
			nodes := []*v1.Node{grouped(node("a", "4"), "g-a"), grouped(node("b", "4"), "g-b")}
			if st := p.(*WeightedLoad).Balance(t.Context(), nodes); st != nil && st.Err != nil {
				t.Fatal(st.Err)
			}
			if diff := cmp.Diff(tc.want, c.evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBalanceBudgetAcrossCycles is the tenant attack on WeightedLoad: an
// attacker's Guaranteed pods load node a, where a victim's Burstable pods
// run, and every cycle would evict the victim's pods first. With a budget
// of one eviction per namespace, shared by the cycles as the rebalancer
// shares it, the victim loses one pod; then the attacker's own pods go.
func TestBalanceBudgetAcrossCycles(t *testing.T) {
	in := func(ns string) func(*v1.Pod) { return func(p *v1.Pod) { p.Namespace = ns } }
	pods := []*v1.Pod{
		pod("v1", "a", "500m", in("victim")), pod("v2", "a", "500m", in("victim")), pod("v3", "a", "500m", in("victim")),
		pod("x1", "a", "1", in("attacker"), guaranteed), pod("x2", "a", "1", in("attacker"), guaranteed),
	}
	ledger := budget.New(budget.Options{Max: 1, Window: time.Hour}, nil)
	c := &fakeCluster{pods: pods}
	c.GetPodsAssignedToNodeFuncImpl = func(name string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		return podsOnFunc(c.pods)(name, filter)
	}
	for range 3 {
		args := WeightedLoadArgs{MaxEvictionsPerNode: 1}
		SetDefaultsWeightedLoadArgs(&args)
		p, err := Builder(Deps{Budget: ledger})(t.Context(), &args, c)
		if err != nil {
			t.Fatal(err)
		}
		if st := p.(*WeightedLoad).Balance(t.Context(), []*v1.Node{node("a", "4"), node("b", "4")}); st != nil && st.Err != nil {
			t.Fatal(st.Err)
		}
	}
	if diff := cmp.Diff([]string{"v1", "x1"}, c.evicted); diff != "" {
		t.Errorf("evicted over three cycles (-want +got):\n%s", diff)
	}
}

// observed records the views a cycle hands its observer.
type observed []CycleView

func (o *observed) ObserveCycle(v CycleView) { *o = append(*o, v) }

// TestBalanceByUsage: with usage: metrics a pod that burns CPU leaves the
// node that uses the most (65% of its CPU measured, 10% requested),
// although another node requests more (75%, 10% used); the observer sees
// the measured shares and their source. With usage: requests the same
// cluster moves a pod off the node that requests more.
func TestBalanceByUsage(t *testing.T) {
	pods := func() []*v1.Pod {
		var out []*v1.Pod
		for i := 1; i <= 4; i++ {
			out = append(out, pod(fmt.Sprintf("burner-%d", i), "uses", "200m"), pod(fmt.Sprintf("idler-%d", i), "requests", "1500m"))
		}
		return out
	}
	metrics := &metricsfake.Clientset{}
	metrics.AddReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &metricsv1beta1.NodeMetricsList{Items: []metricsv1beta1.NodeMetrics{
			{ObjectMeta: metav1.ObjectMeta{Name: "uses"}, Usage: v1.ResourceList{v1.ResourceCPU: resource.MustParse("5200m"), v1.ResourceMemory: resource.MustParse("1Gi")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "requests"}, Usage: v1.ResourceList{v1.ResourceCPU: resource.MustParse("800m"), v1.ResourceMemory: resource.MustParse("1Gi")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "idle"}, Usage: v1.ResourceList{v1.ResourceCPU: resource.MustParse("400m"), v1.ResourceMemory: resource.MustParse("1Gi")}},
		}}, nil
	})
	metrics.AddReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		use := func(name, cpu string) metricsv1beta1.PodMetrics {
			return metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Containers: []metricsv1beta1.ContainerMetrics{
				{Name: "c", Usage: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("100Mi")}},
			}}
		}
		list := &metricsv1beta1.PodMetricsList{}
		for i := 1; i <= 4; i++ {
			list.Items = append(list.Items, use(fmt.Sprintf("burner-%d", i), "1200m"), use(fmt.Sprintf("idler-%d", i), "100m"))
		}
		return true, list, nil
	})
	for _, tc := range []struct {
		usage      string
		want       []string
		wantSource usage.Source
	}{
		{UsageMetrics, []string{"burner-1"}, usage.Metrics},
		{UsageRequests, []string{"idler-1"}, usage.Requests},
	} {
		t.Run(tc.usage, func(t *testing.T) {
			c := &fakeCluster{pods: pods()}
			c.GetPodsAssignedToNodeFuncImpl = func(name string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
				return podsOnFunc(c.pods)(name, filter)
			}
			args := WeightedLoadArgs{Usage: tc.usage, Weights: Weights{Memory: new(int32(0))}}
			SetDefaultsWeightedLoadArgs(&args)
			if err := ValidateWeightedLoadArgs(&args); err != nil {
				t.Fatal(err)
			}
			var seen observed
			p, err := Builder(Deps{Metrics: metrics, Observer: &seen})(t.Context(), &args, c)
			if err != nil {
				t.Fatal(err)
			}
			nodes := []*v1.Node{node("uses", "8"), node("requests", "8"), node("idle", "8")}
			if st := p.(*WeightedLoad).Balance(t.Context(), nodes); st != nil && st.Err != nil {
				t.Fatal(st.Err)
			}
			if diff := cmp.Diff(tc.want, c.evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
			if len(seen) != 1 {
				t.Fatalf("observed %d cycles, want 1", len(seen))
			}
			if diff := cmp.Diff(map[usage.Dimension]map[usage.Source]int{usage.CPU: {tc.wantSource: 3}}, seen[0].Sources); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
		})
	}
}
