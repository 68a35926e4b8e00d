package rebalance

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The tenants scene: two namespaces share a pool of two 4-CPU nodes, which
// the policy's nodeSelector gives WeightedLoad alone.
const (
	tenantPool  = "rebalance.test/tenant-pool"
	victimNS    = "tenant-victim"
	attackerNS  = "tenant-attacker"
	victimPods  = 4
	victimCPU   = 500 // millicores each
	attackRound = 4
	// tenantBudget is the scene's --namespace-eviction-budget (shipped:
	// 10 per hour), below what the attack would cost the victim without
	// the cooldown, so that the budget is what holds.
	tenantBudget = 3
	// pushWait bounds the wait for a cycle after each push: a triggered
	// cycle starts within a second of the push (--trigger-min-interval=1s)
	// and takes well under a second here.
	pushWait = 8 * time.Second
)

var tenantNodes = []string{"tenant-a", "tenant-b"}

// tenants is the attack of a tenant who can load a node and of a node
// owner who can flip its group label, against the rebalancer as the
// Deployment runs it (leader election, a 10-minute timer, the triggers
// on). The attacker pins large Guaranteed pods to the node that runs the
// most of the victim's Burstable pods, pushing it over 90% of its CPU, and
// takes them away again, round after round; WeightedLoad evicts Burstable
// pods first. Then the group label of a node flips back and forth, as its
// owner's labeler would write it. The test compresses time
// (--trigger-min-interval=1s, shipped 30s: the attack works at 30s too,
// only slower) and sets --namespace-eviction-budget=3; the cooldown
// (5m) and the re-arm band (10 points) are as shipped. The victim loses
// at most its budget, each node starts at most one cycle, and the flips
// start none beyond that. Before these defences the same rounds cost the
// victim two pods each and started a cycle each, and each flip a cycle.
func tenants(ctx SpecContext) {
	By("two tenants' namespaces; the victim's Burstable replicas spread over two 4-CPU nodes")
	for _, ns := range []string{victimNS, attackerNS} {
		Expect(cluster.AddNamespace(ctx, ns)).To(Succeed())
	}
	for _, n := range tenantNodes {
		node := poolNodeIn(tenantPool, n, "4")
		// As the labeler labels it: a node owner controls this value.
		node.Labels[isa.GroupLabel] = "g1"
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
	}
	// One replica per Deployment: WeightedLoad moves a pod only to a node
	// that runs fewer of its siblings, and the victim's services are many.
	for i := 1; i <= victimPods; i++ {
		victim := poolDeploymentIn(tenantPool, fmt.Sprintf("victim-%d", i), fmt.Sprintf("%dm", victimCPU), 1, false)
		victim.Namespace = victimNS
		Expect(cp.Client.Create(ctx, victim)).To(Succeed())
	}
	perNode := func(g Gomega) map[string]int {
		var list corev1.PodList
		g.Expect(cp.Client.List(ctx, &list, client.InNamespace(victimNS), client.HasLabels{tenantPool})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(victimPods))
		out := map[string]int{}
		for _, p := range list.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "%s terminating", p.Name)
			g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not ready", p.Name)
			out[p.Spec.NodeName]++
		}
		return out
	}
	Eventually(perNode).WithContext(ctx).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
		Should(Equal(map[string]int{"tenant-a": 2, "tenant-b": 2}), "the scheduler spreads the victim's pods evenly")

	policy, err := cluster.ProfilePolicy("tenant-policy.yaml", "WeightedLoad", tenantPool+"=true", nil)
	Expect(err).NotTo(HaveOccurred())
	rec, err := rebalancecluster.StartRecorder(ctx, c, victimNS, "victim-1")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(rec.Stop)
	r := startRebalancer(ctx, policy, "tenants", "--trigger-min-interval=1s", fmt.Sprintf("--namespace-eviction-budget=%d", tenantBudget))
	waitCycles(ctx, r, map[string]int{"start": 1})
	Expect(rec.Evicted()).To(BeEmpty(), "the start cycle finds the pool balanced")

	By(fmt.Sprintf("the attacker pushes the node with the most victim replicas over 90%% of its CPU, %d times", attackRound))
	var pushes []string
	for round := 1; round <= attackRound; round++ {
		var spread map[string]int
		Eventually(func(g Gomega) { spread = perNode(g) }).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		target := tenantNodes[0]
		if spread[tenantNodes[1]] > spread[target] {
			target = tenantNodes[1]
		}
		cpu := 3700 - victimCPU*spread[target] // 92.5% of 4 CPUs with the victim's
		push := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("push-%d", round), Namespace: attackerNS, Labels: poolLabels(tenantPool, "push")},
			Spec:       poolSpec(tenantPool, fmt.Sprintf("%dm", cpu), true, corev1.RestartPolicyAlways),
		}
		push.Spec.NodeName = target
		before := cycles(ctx, r)
		Expect(cp.Client.Create(ctx, push)).To(Succeed())
		pushes = append(pushes, fmt.Sprintf("%s (%dm beside %d victim replicas)", target, cpu, spread[target]))
		awaitCycle(ctx, r, "threshold", before)
		Expect(cp.Client.Delete(ctx, push, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() error { return cp.Client.Get(ctx, client.ObjectKeyFromObject(push), &corev1.Pod{}) }).
			WithContext(ctx).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("not found")))
	}
	afterPushes := cycles(ctx, r)

	By(fmt.Sprintf("the owner of %s flips its group label %d times", tenantNodes[0], attackRound))
	for i := range attackRound {
		var n corev1.Node
		Expect(cp.Client.Get(ctx, client.ObjectKey{Name: tenantNodes[0]}, &n)).To(Succeed())
		n.Labels[isa.GroupLabel] = []string{"g2", "g1"}[i%2]
		before := cycles(ctx, r)
		Expect(cp.Client.Update(ctx, &n)).To(Succeed())
		awaitCycle(ctx, r, "node_join", before)
	}
	final := cycles(ctx, r)
	evicted := rec.Evicted()
	report := fmt.Sprintf("tenants: pushes %v; victim evictions %d %v (budget %d); cycles after the pushes %v, after the label flips %v",
		pushes, len(evicted), evicted, tenantBudget, afterPushes, final)
	AddReportEntry("tenants", report)
	GinkgoWriter.Println(report)

	Expect(afterPushes["threshold"]).To(BeNumerically(">=", 1), "a node pushed over the threshold still starts a cycle")
	Expect(evicted).NotTo(BeEmpty(), "the rebalancer still moves load off a hot node")
	Expect(len(evicted)).To(BeNumerically("<=", tenantBudget), "the victim loses at most its budget: %v", evicted)
	Expect(afterPushes["threshold"]).To(BeNumerically("<=", len(tenantNodes)), "each node starts at most one cycle per cooldown")
	Expect(final["node_join"]).To(BeZero(), "a node that started a cycle within the cooldown starts none by flipping its group label")
}

// awaitCycle waits up to pushWait for a cycle of kind to finish after
// before (the counts before the event that may start it); a trigger the
// defences hold back starts none, so this is a bound, not a condition.
func awaitCycle(ctx context.Context, r *rebalancecluster.Rebalancer, kind string, before map[string]int) {
	GinkgoHelper()
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, pushWait, false, func(ctx context.Context) (bool, error) {
		got, err := r.Cycles(ctx)
		return err == nil && got[kind] > before[kind], nil
	})
}

// cycles reads the rebalancer's cycle counter.
func cycles(ctx context.Context, r *rebalancecluster.Rebalancer) map[string]int {
	GinkgoHelper()
	got, err := r.Cycles(ctx)
	Expect(err).NotTo(HaveOccurred())
	return got
}
