package rebalance

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
)

// The node-join scene runs in a pool of its own, which the policy's
// nodeSelector gives WeightedLoad alone: the cluster average is the pool's.
const (
	joinPool = "rebalance.test/join-pool"
	// longInterval is --descheduling-interval: no timer cycle runs during
	// the spec.
	longInterval = 10 * time.Minute
	// quiet is how long the control watches for evictions after a join.
	quiet = 20 * time.Second
	// hotReplicas x hotCPU fill two 4-CPU nodes to 75% each.
	hotReplicas = 12
	hotCPU      = "500m"
)

// nodeJoin runs the rebalancer as the Deployment does (leader election,
// a cycle every 10 minutes) over two nodes at 75%, balanced: the start
// cycle evicts nothing. An empty node joins. With the triggers off
// (control) nothing is evicted for 20 s; with them on, evictions start
// within seconds and load moves to the new node.
func nodeJoin(ctx SpecContext) {
	By("loading two 4-CPU nodes of the join pool to 75% each")
	for _, n := range []string{"join-a", "join-b"} {
		Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNodeIn(joinPool, n, "4"))).To(Succeed())
	}
	Expect(cp.Client.Create(ctx, poolDeploymentIn(joinPool, "hot", hotCPU, hotReplicas, false))).To(Succeed())
	hot := func(g Gomega) map[string]int {
		var list corev1.PodList
		g.Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "hot"})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(hotReplicas))
		perNode := map[string]int{}
		for _, p := range list.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "%s terminating", p.Name)
			g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not ready", p.Name)
			perNode[p.Spec.NodeName]++
		}
		return perNode
	}
	Eventually(hot).WithContext(ctx).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
		Should(Equal(map[string]int{"join-a": 6, "join-b": 6}), "the scheduler spreads the replicas evenly")

	policy, err := cluster.ProfilePolicy("join-policy.yaml", "WeightedLoad", joinPool+"=true", nil)
	Expect(err).NotTo(HaveOccurred())
	rec := startRecorder(ctx)
	hotEvictions := func() int {
		n := 0
		for _, name := range rec.Evicted() {
			if strings.HasPrefix(name, "hot-") {
				n++
			}
		}
		return n
	}

	By("control: triggers off, join-c joins, nothing is evicted for 20s")
	control := startRebalancer(ctx, policy, "control", "--trigger-on-node-join=false", "--trigger-on-threshold=false")
	waitCycles(ctx, control, map[string]int{"start": 1})
	Expect(hotEvictions()).To(BeZero(), "the start cycle finds the two nodes balanced")
	Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNodeIn(joinPool, "join-c", "4"))).To(Succeed())
	Consistently(hotEvictions).WithContext(ctx).WithTimeout(quiet).WithPolling(500 * time.Millisecond).Should(BeZero())
	Expect(control.Cycles(ctx)).To(Equal(map[string]int{"start": 1}), "no cycle but the start cycle")
	Expect(control.Stop(10 * time.Second)).To(Succeed())
	Expect(cp.Client.Delete(ctx, poolNodeIn(joinPool, "join-c", "4"))).To(Succeed())

	By("triggers on (the defaults): join-d joins and the rebalancer moves load to it at once")
	r := startRebalancer(ctx, policy, "trigger")
	waitCycles(ctx, r, map[string]int{"start": 1})
	Expect(hotEvictions()).To(BeZero(), "the start cycle finds the two nodes balanced")
	pool := map[string]float64{"join-a": 4000, "join-b": 4000, "join-d": 4000}
	before := spread(podsOf(ctx, "hot"), pool)
	joined := time.Now()
	Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNodeIn(joinPool, "join-d", "4"))).To(Succeed())
	Eventually(hotEvictions).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).
		Should(BeNumerically(">", 0), "evictions start well before the %s interval", longInterval)
	firstEviction := time.Since(joined)
	var perNode map[string]int
	Eventually(func(g Gomega) {
		perNode = hot(g)
		g.Expect(perNode["join-d"]).To(BeNumerically(">", 0))
	}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	waitCycles(ctx, r, map[string]int{"start": 1, "node_join": 1})
	after := spread(podsOf(ctx, "hot"), pool)
	report := fmt.Sprintf("node join: first eviction %.1fs after join-d joined (interval %s; control with triggers off: 0 evictions in %s); %d evictions; replicas per node %v; spread of CPU share over join-a/b/d %s",
		firstEviction.Seconds(), longInterval, quiet, hotEvictions(), perNode, percentages([]float64{before, after}))
	AddReportEntry("node join trigger", report)
	GinkgoWriter.Println(report)
	Expect(after).To(BeNumerically("<", before), "load moved to the new node")
	Expect(r.Stop(10 * time.Second)).To(Succeed())
}

// startRebalancer starts a long-running rebalancer (lease name in ns) with
// a cycle every longInterval; its log is reported when the spec fails.
func startRebalancer(ctx context.Context, policy, name string, extraArgs ...string) *rebalancecluster.Rebalancer {
	GinkgoHelper()
	return startRebalancerEvery(ctx, policy, name, longInterval, extraArgs...)
}

// startRebalancerEvery is startRebalancer with a cycle every interval.
func startRebalancerEvery(ctx context.Context, policy, name string, interval time.Duration, extraArgs ...string) *rebalancecluster.Rebalancer {
	GinkgoHelper()
	r, err := cluster.StartRebalancer(ctx, policy, name, ns, interval, extraArgs...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			AddReportEntry("rebalancer "+name+" log", r.LogTail(80))
		}
		_ = r.Stop(10 * time.Second)
	})
	return r
}

// waitCycles waits until the rebalancer has finished exactly want cycles.
func waitCycles(ctx context.Context, r *rebalancecluster.Rebalancer, want map[string]int) {
	GinkgoHelper()
	Eventually(r.Cycles).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Equal(want))
}
