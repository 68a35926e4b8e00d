package isafit

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	fakeclientset "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/fake"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
)

// trustedLabel marks the nodes an admin trusts; kubelets cannot set it on
// their own Node (NodeRestriction).
const trustedLabel = "node-restriction.kubernetes.io/isamatch-trusted"

// fakeCluster is the handle Balance runs against: pods in a fake clientset
// (read through an informer), and an evictor that deletes them and can
// refuse the first attempts as a PodDisruptionBudget would.
type fakeCluster struct {
	fake.HandleImpl
	pods    []*v1.Pod
	refuse  int // attempts to refuse
	evicted []string
	tries   int
}

func (c *fakeCluster) Filter(*v1.Pod) bool             { return true }
func (c *fakeCluster) PreEvictionFilter(*v1.Pod) bool  { return true }
func (c *fakeCluster) Evictor() frameworktypes.Evictor { return c }

func (c *fakeCluster) Evict(ctx context.Context, pod *v1.Pod, _ evictions.EvictOptions) error {
	c.tries++
	if c.refuse > 0 {
		c.refuse--
		return errors.New("Cannot evict pod as it would violate the pod's disruption budget")
	}
	c.evicted = append(c.evicted, pod.Name)
	c.pods = slices.DeleteFunc(c.pods, func(p *v1.Pod) bool { return p.UID == pod.UID })
	return c.ClientsetImpl.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
}

func newFakeCluster(t *testing.T, pods []*v1.Pod, refuse int) *fakeCluster {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	cs := fakeclientset.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(cs, 0)
	factory.Core().V1().Pods().Informer() // registered before Start
	c := &fakeCluster{pods: pods, refuse: refuse}
	c.ClientsetImpl = cs
	c.SharedInformerFactoryImpl = factory
	c.GetPodsAssignedToNodeFuncImpl = func(name string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		return podsOnFunc(c.pods)(name, filter)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	return c
}

func TestBalance(t *testing.T) {
	imfd := node("imfd", groupIMFD, "2")
	imfdv := node("imfdv", groupIMFDV, "8")
	trusted := func(n *v1.Node) { n.Labels[trustedLabel] = "true" }
	onlyTrusted := &metav1.LabelSelector{MatchLabels: map[string]string{trustedLabel: "true"}}
	three := func() []*v1.Pod {
		return []*v1.Pod{imfdPod("a", "imfdv", "1"), imfdPod("b", "imfdv", "1"), imfdPod("c", "imfdv", "1")}
	}
	for _, tc := range []struct {
		name        string
		args        ISAFitArgs
		nodes       []*v1.Node // nil: imfd and imfdv
		budget      int        // per namespace, 0: none
		pods        []*v1.Pod
		refuse      int
		wantEvicted []string
		wantSleeps  int
	}{{
		name:        "moves as many as the better node has room for, counting the moves made",
		args:        ISAFitArgs{MaxEvictionsPerNode: 10},
		pods:        three(),
		wantEvicted: []string{"a", "b"},
	}, {
		name:        "per-node limit",
		args:        ISAFitArgs{MaxEvictionsPerNode: 1},
		pods:        three(),
		wantEvicted: []string{"a"},
	}, {
		name:        "per-cycle limit",
		args:        ISAFitArgs{MaxEvictionsPerCycle: 1},
		pods:        three(),
		wantEvicted: []string{"a"},
	}, {
		name:        "a refused eviction is skipped until the next cycle without disruptionWait",
		pods:        []*v1.Pod{imfdPod("a", "imfdv", "1")},
		refuse:      1,
		wantEvicted: nil,
	}, {
		name:        "a refused eviction is retried after a wait with disruptionWait",
		args:        ISAFitArgs{DisruptionWait: metav1.Duration{Duration: time.Minute}},
		pods:        []*v1.Pod{imfdPod("a", "imfdv", "1")},
		refuse:      2,
		wantEvicted: []string{"a"},
		wantSleeps:  2,
	}, {
		name:        "a node claiming a better tier draws no pod unless targetNodeSelector admits it",
		args:        ISAFitArgs{MaxEvictionsPerNode: 10, TargetNodeSelector: onlyTrusted},
		pods:        three(),
		wantEvicted: nil,
	}, {
		name:        "a trusted node of a better tier still draws pods",
		args:        ISAFitArgs{MaxEvictionsPerNode: 10, TargetNodeSelector: onlyTrusted},
		nodes:       []*v1.Node{node("imfd", groupIMFD, "2", trusted), imfdv},
		pods:        three(),
		wantEvicted: []string{"a", "b"},
	}, {
		name:        "the namespace's eviction budget",
		args:        ISAFitArgs{MaxEvictionsPerNode: 10},
		budget:      1,
		pods:        three(),
		wantEvicted: []string{"a"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeCluster(t, tc.pods, tc.refuse)
			args := tc.args
			SetDefaultsISAFitArgs(&args)
			if err := ValidateISAFitArgs(&args); err != nil {
				t.Fatal(err)
			}
			ledger := budget.New(budget.Options{Max: tc.budget, Window: time.Hour}, nil)
			p, err := Builder(ledger)(t.Context(), &args, c)
			if err != nil {
				t.Fatal(err)
			}
			plugin := p.(*ISAFit)
			sleeps := 0
			clock := testNow
			plugin.now = func() time.Time { return clock }
			plugin.sleep = func(context.Context, time.Duration) error {
				sleeps++
				clock = clock.Add(args.RetryInterval.Duration)
				return nil
			}
			nodes := tc.nodes
			if nodes == nil {
				nodes = []*v1.Node{imfd, imfdv}
			}
			if st := plugin.Balance(t.Context(), nodes); st != nil && st.Err != nil {
				t.Fatal(st.Err)
			}
			if diff := cmp.Diff(tc.wantEvicted, c.evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
			if sleeps != tc.wantSleeps {
				t.Errorf("waited %d times, want %d", sleeps, tc.wantSleeps)
			}
		})
	}
}
