package rebalance

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
)

// The usage scene: three 4-CPU nodes of a pool of their own. Four
// "burn" replicas request 200m and use 1000m each; three "idle" replicas
// request 1000m and use 100m each.
const (
	usagePool     = "rebalance.test/usage-pool"
	burnReplicas  = 4
	idleReplicas  = 3
	usageInterval = 3 * time.Second
	// usageCycles bounds the cycles watched per run.
	usageCycles = 8
)

var usageNodes = []string{"use-a", "use-b", "use-c"}

// usageCycle is what one rebalancer cycle of the usage scene saw; the
// first of a run is the scene before the rebalancer starts.
type usageCycle struct {
	// balance is the rebalancer's isamatch_rebalancer_balance_index,
	// measured at the start of the cycle (NaN before the first).
	balance float64
	// spread is the largest minus the smallest measured CPU share over the
	// pool (the Metrics API's NodeMetrics over allocatable), after the
	// cycle's moves settled.
	spread float64
	// evicted counts the run's evictions so far.
	evicted int
}

// usageBalance runs the same scene twice through a real aggregated Metrics
// API whose numbers the test sets (rebalancecluster.MetricsAPI): once with
// the shipped policy (usage: metrics), once with usage: requests. By
// use, use-a is the loaded node (102% of its CPU) although use-b requests
// the most (75%); by requests, use-b is. With usage the rebalancer moves
// burn replicas off use-a and the measured spread and the balance index
// improve cycle after cycle; with requests it moves idle replicas off use-b
// and use-a stays hot.
func usageBalance(ctx SpecContext) {
	api, err := cluster.StartMetricsAPI(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(api.Stop(ctx)).To(Succeed()) })
	for _, n := range usageNodes {
		node := poolNodeIn(usagePool, n, "4")
		node.Spec.Unschedulable = true
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
	}

	var report []string
	runs := map[string][]usageCycle{}
	firstEvicted := map[string][]string{}
	for _, mode := range []string{"metrics", "requests"} {
		By("usage: " + mode + ": placing the burn replicas on use-a and the idle replicas on use-b")
		placeUsageScene(ctx)
		policy, err := cluster.ProfilePolicy("usage-"+mode+".yaml", "WeightedLoad", usagePool+"=true", map[string]any{"usage": mode})
		Expect(err).NotTo(HaveOccurred())
		var before float64
		Eventually(func(g Gomega) { before = measuredSpread(g, ctx) }).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		rec := startRecorder(ctx)
		r := startRebalancerEvery(ctx, policy, "usage-"+mode, usageInterval)
		seen := []usageCycle{{spread: before, balance: math.NaN()}}
		done := 0
		for len(seen) <= usageCycles {
			Eventually(func(g Gomega) int { return sumCycles(g, ctx, r) }).WithContext(ctx).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).
				Should(BeNumerically(">", done), "a cycle every %s", usageInterval)
			done = sumCycles(Default, ctx, r)
			balance, found, err := r.Metric(ctx, "isamatch_rebalancer_balance_index", nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(found).To(BeTrue(), "the cycle exported its balance index")
			var spread float64
			Eventually(func(g Gomega) { spread = measuredSpread(g, ctx) }).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
			seen = append(seen, usageCycle{balance: balance, spread: spread, evicted: len(rec.Evicted())})
			if n := len(seen); n >= 4 && seen[n-1].evicted == seen[n-3].evicted {
				break // two cycles without an eviction: settled
			}
		}
		checkLoadGauge(ctx, r, mode)
		Expect(r.Stop(10 * time.Second)).To(Succeed())
		runs[mode] = seen
		firstEvicted[mode] = rec.Evicted()
		report = append(report, fmt.Sprintf("usage: %s: per cycle balance index %s, measured CPU spread %s, evictions so far %v; evicted %v",
			mode, column(seen, func(c usageCycle) float64 { return c.balance }), column(seen, func(c usageCycle) float64 { return c.spread }),
			evictions(seen), rec.Evicted()))
		removeUsageScene(ctx)
	}
	AddReportEntry("usage", strings.Join(report, "\n"))
	GinkgoWriter.Println(strings.Join(report, "\n"))

	byUse, byRequests := runs["metrics"], runs["requests"]
	Expect(firstEvicted["metrics"]).NotTo(BeEmpty())
	for _, name := range firstEvicted["metrics"] {
		Expect(name).To(HavePrefix("burn-"), "by use, only burn replicas leave the node that uses the most")
	}
	Expect(firstEvicted["requests"]).NotTo(BeEmpty())
	for _, name := range firstEvicted["requests"] {
		Expect(name).To(HavePrefix("idle-"), "by requests, idle replicas leave the node that requests the most")
	}
	last := func(cs []usageCycle) usageCycle { return cs[len(cs)-1] }
	Expect(last(byUse).spread).To(BeNumerically("<", byUse[0].spread/2), "by use, the measured spread at least halves")
	Expect(last(byUse).balance).To(BeNumerically(">", byUse[1].balance), "the balance index rises: %s", column(byUse, func(c usageCycle) float64 { return c.balance }))
	Expect(last(byUse).spread).To(BeNumerically("<", last(byRequests).spread), "balancing by use leaves a smaller measured spread than balancing by requests")
}

// placeUsageScene puts the burn replicas on use-a and the idle replicas on
// use-b by opening one node at a time to the scheduler, then opens all
// three, and waits until every replica runs.
func placeUsageScene(ctx context.Context) {
	GinkgoHelper()
	setSchedulable(ctx, "use-a")
	Expect(cp.Client.Create(ctx, usageDeployment("burn", "200m", "1000m", burnReplicas))).To(Succeed())
	Eventually(func(g Gomega) map[string]int { return usagePods(g, ctx, "burn") }).WithContext(ctx).WithTimeout(60 * time.Second).
		WithPolling(250 * time.Millisecond).Should(Equal(map[string]int{"use-a": burnReplicas}))
	setSchedulable(ctx, "use-b")
	Expect(cp.Client.Create(ctx, usageDeployment("idle", "1000m", "100m", idleReplicas))).To(Succeed())
	Eventually(func(g Gomega) map[string]int { return usagePods(g, ctx, "idle") }).WithContext(ctx).WithTimeout(60 * time.Second).
		WithPolling(250 * time.Millisecond).Should(Equal(map[string]int{"use-b": idleReplicas}))
	setSchedulable(ctx, usageNodes...)
}

// removeUsageScene deletes both Deployments, their ReplicaSets and pods
// (the cluster runs no garbage collector), waits until the pods are gone,
// and closes the nodes again.
func removeUsageScene(ctx context.Context) {
	GinkgoHelper()
	for _, app := range []string{"burn", "idle"} {
		Expect(cp.Client.Delete(ctx, usageDeployment(app, "0", "0", 0))).To(Succeed())
	}
	pool := client.MatchingLabels{usagePool: "true"}
	Eventually(func(g Gomega) {
		// Deleted again on every poll: a ReplicaSet controller that has not
		// yet seen its ReplicaSet go replaces the pods deleted meanwhile,
		// and no garbage collector removes what it made.
		g.Expect(cp.Client.DeleteAllOf(ctx, &appsv1.ReplicaSet{}, client.InNamespace(ns), pool)).To(Succeed())
		g.Expect(cp.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), pool)).To(Succeed())
		var list corev1.PodList
		g.Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.HasLabels{usagePool})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	var nodes corev1.NodeList
	Expect(cp.Client.List(ctx, &nodes, client.HasLabels{usagePool})).To(Succeed())
	for _, n := range nodes.Items {
		n.Spec.Unschedulable = true
		Expect(cp.Client.Update(ctx, &n)).To(Succeed())
	}
}

// setSchedulable uncordons names (and cordons the pool's other nodes).
func setSchedulable(ctx context.Context, names ...string) {
	GinkgoHelper()
	for _, n := range usageNodes {
		Eventually(func() error {
			var node corev1.Node
			if err := cp.Client.Get(ctx, client.ObjectKey{Name: n}, &node); err != nil {
				return err
			}
			node.Spec.Unschedulable = !slices.Contains(names, n)
			return cp.Client.Update(ctx, &node)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}
}

// usageDeployment is a Deployment of the usage pool whose pods request
// cpu and use use (rebalancecluster.CPUUsageAnnotation), and 64Mi of
// memory.
func usageDeployment(app, cpu, use string, n int32) *appsv1.Deployment {
	d := poolDeploymentIn(usagePool, app, cpu, n, false)
	d.Spec.Template.Annotations = map[string]string{
		rebalancecluster.CPUUsageAnnotation: use, rebalancecluster.MemoryUsageAnnotation: "64Mi",
	}
	return d
}

// usagePods counts the running, ready replicas of app per node.
func usagePods(g Gomega, ctx context.Context, app string) map[string]int {
	var list corev1.PodList
	g.Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
	out := map[string]int{}
	for _, p := range list.Items {
		g.Expect(p.DeletionTimestamp).To(BeNil(), "%s terminating", p.Name)
		g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not ready", p.Name)
		out[p.Spec.NodeName]++
	}
	return out
}

// measuredSpread waits for no replica to be missing or terminating, then
// reads NodeMetrics through the API server's aggregation layer and
// returns the largest minus the smallest CPU share over the pool.
func measuredSpread(g Gomega, ctx context.Context) float64 {
	burn, idle := usagePods(g, ctx, "burn"), usagePods(g, ctx, "idle")
	g.Expect(total(burn) + total(idle)).To(Equal(burnReplicas + idleReplicas))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, n := range usageNodes {
		s := measuredShare(g, ctx, n)
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi - lo
}

// measuredShare is the node's CPU usage as the Metrics API reports it,
// over its allocatable CPU.
func measuredShare(g Gomega, ctx context.Context, name string) float64 {
	cpu, err := rebalancecluster.NodeMetricsCPU(ctx, cp.Client, name)
	g.Expect(err).NotTo(HaveOccurred())
	var node corev1.Node
	g.Expect(cp.Client.Get(ctx, client.ObjectKey{Name: name}, &node)).To(Succeed())
	return cpu / float64(node.Status.Allocatable.Cpu().MilliValue())
}

// checkLoadGauge: once the run has settled (nothing moves), the
// rebalancer's CPU load gauge of every node agrees with its source: the
// Metrics API by use, what the node's pods request by requests.
func checkLoadGauge(ctx context.Context, r *rebalancecluster.Rebalancer, mode string) {
	GinkgoHelper()
	for _, n := range usageNodes {
		var want float64
		source := "requests"
		if mode == "metrics" {
			want, source = measuredShare(Default, ctx, n), "metrics"
		} else {
			var list corev1.PodList
			Expect(cp.Client.List(ctx, &list, client.MatchingFields{"spec.nodeName": n})).To(Succeed())
			for _, p := range list.Items {
				want += float64(p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()) / 4000
			}
		}
		got, found, err := r.Metric(ctx, "isamatch_rebalancer_node_load_ratio", map[string]string{"node": n, "dimension": "cpu", "source": source})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "a CPU load gauge for %s with source %s", n, source)
		Expect(got).To(BeNumerically("~", want, 0.001), "the rebalancer's load of %s agrees with its source", n)
	}
}

func sumCycles(g Gomega, ctx context.Context, r *rebalancecluster.Rebalancer) int {
	got, err := r.Cycles(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, v := range got {
		n += v
	}
	return n
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func column(cs []usageCycle, f func(usageCycle) float64) string {
	var out []string
	for _, c := range cs {
		if math.IsNaN(f(c)) {
			out = append(out, "-")
			continue
		}
		out = append(out, fmt.Sprintf("%.0f%%", 100*f(c)))
	}
	return strings.Join(out, " -> ")
}

func evictions(cs []usageCycle) []int {
	var out []int
	for _, c := range cs {
		out = append(out, c.evicted)
	}
	return out
}
