package rebalance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The load pool: nodes of different sizes, tainted so that only the pool's
// pods (which carry no isamatch tiers) run there.
const (
	poolLabel = "rebalance.test/pool"
	poolTaint = "rebalance.test/pool"
)

// weightedLoad spreads the load of a hot node onto joining nodes cycle
// after cycle until it settles, never moving restartPolicy Never pods. It
// runs after isaFit, whose pods stay: the cluster average counts every
// node.
func weightedLoad(ctx SpecContext) {
	By("loading one 4-CPU node above 90%")
	Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNode("load-a", "4"))).To(Succeed())
	Expect(cp.Client.Create(ctx, poolDeployment("busy", "500m", 6, false))).To(Succeed())
	Expect(cp.Client.Create(ctx, poolDeployment("steady", "250m", 1, true))).To(Succeed())
	Expect(cp.Client.Create(ctx, poolJob("never", "250m", corev1.RestartPolicyNever))).To(Succeed())
	Expect(cp.Client.Create(ctx, poolJob("onfailure", "250m", corev1.RestartPolicyOnFailure))).To(Succeed())
	settled := func(g Gomega) []corev1.Pod {
		var list corev1.PodList
		g.Expect(cp.Client.List(ctx, &list, client.InNamespace(ns), client.HasLabels{poolLabel})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(9))
		for _, p := range list.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "%s terminating", p.Name)
			g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not ready", p.Name)
		}
		return list.Items
	}
	Eventually(settled).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(HaveLen(9))

	By("joining an 8-CPU and a 2-CPU node")
	Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNode("load-b", "8"))).To(Succeed())
	Expect(testbed.CreateReadyNode(ctx, cp.Client, poolNode("load-c", "2"))).To(Succeed())
	pool := map[string]float64{"load-a": 4000, "load-b": 8000, "load-c": 2000}
	before := podsByName(settled(Default))
	spreads := []float64{spread(before, pool)}

	// Without the rebalancer: the same scene, waits of a cycle's length.
	idle := []float64{spreads[0]}
	for range idleWaits {
		select {
		case <-ctx.Done():
			return
		case <-time.After(idleWait):
		}
		idle = append(idle, spread(podsByName(settled(Default)), pool))
	}

	rec := startRecorder(ctx)
	policy := testPolicy()
	var perCycle []int
	var took []time.Duration
	for i := 1; i <= 6; i++ {
		n := len(rec.Evicted())
		took = append(took, runCycle(ctx, policy, fmt.Sprintf("load-%d", i)).Round(100*time.Millisecond))
		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods = settled(g) }).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		perCycle = append(perCycle, len(rec.Evicted())-n)
		spreads = append(spreads, spread(podsByName(pods), pool))
		if perCycle[len(perCycle)-1] == 0 {
			break
		}
	}
	report := fmt.Sprintf("spread of CPU share over load-a/b/c per cycle (cycle 0: before, nodes joined): %s; evictions per cycle %v; cycles took %v; eviction order %v; "+
		"without the rebalancer, every %s: %s",
		percentages(spreads), perCycle, took, rec.Evicted(), idleWait, percentages(idle))
	AddReportEntry("WeightedLoad", report)
	GinkgoWriter.Println(report)

	for i, s := range idle {
		Expect(s).To(Equal(spreads[0]), "without the rebalancer the spread stays (wait %d): %s", i, percentages(idle))
	}
	Expect(perCycle[len(perCycle)-1]).To(BeZero(), "the load settles: the last cycle evicts nothing")
	Expect(len(perCycle)).To(BeNumerically(">", 2), "more than one cycle moves pods (2 per node per cycle)")
	Expect(spreads[len(spreads)-1]).To(BeNumerically("<", spreads[0]/2), "the spread at least halves")
	for i := 1; i < len(spreads); i++ {
		Expect(spreads[i]).To(BeNumerically("<=", spreads[i-1]+0.01), "the spread never grows: %s", percentages(spreads))
	}
	order := rec.Evicted()
	Expect(order).NotTo(BeEmpty())
	Expect(order[0]).To(HavePrefix("onfailure-"), "OnFailure pods go first")
	for _, name := range order {
		Expect(name).NotTo(HavePrefix("never-"), "a restartPolicy Never pod was evicted")
		Expect(name).NotTo(HavePrefix("steady-"), "the Guaranteed pod was evicted while Burstable ones could go")
	}
}

// Without the rebalancer, the load scene is watched idleWaits times for
// idleWait, longer than one of its cycles takes.
const (
	idleWaits = 4
	idleWait  = 5 * time.Second
)

func poolNode(name, cpu string) *corev1.Node { return poolNodeIn(poolLabel, name, cpu) }

// poolNodeIn is a node of the pool whose nodes carry the label pool=true.
func poolNodeIn(pool, name, cpu string) *corev1.Node {
	return testbed.MakeNode(name).CPU(cpu).Label(pool, "true").
		Taint(corev1.Taint{Key: poolTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}).Obj()
}

// poolSpec is a pod spec for the pool of nodes labelled pool=true: its
// node selector and toleration, one container requesting cpu (and
// limiting it and memory to the same requests when guaranteed).
func poolSpec(pool, cpu string, guaranteed bool, restart corev1.RestartPolicy) corev1.PodSpec {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	if guaranteed {
		res.Requests[corev1.ResourceMemory] = resource.MustParse("64Mi")
		res.Limits = res.Requests.DeepCopy()
	}
	return corev1.PodSpec{
		RestartPolicy: restart,
		NodeSelector:  map[string]string{pool: "true"},
		Tolerations:   []corev1.Toleration{{Key: poolTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Containers:    []corev1.Container{{Name: "main", Image: reg.Ref(image, "v1"), Resources: res}},
	}
}

// poolLabels mark a pod of pool; the webhook leaves it alone (no tiers).
func poolLabels(pool, app string) map[string]string {
	return map[string]string{"app": app, pool: "true", isa.IgnoreLabel: "true"}
}

func poolDeployment(app, cpu string, n int32, guaranteed bool) *appsv1.Deployment {
	return poolDeploymentIn(poolLabel, app, cpu, n, guaranteed)
}

func poolDeploymentIn(pool, app, cpu string, n int32, guaranteed bool) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: poolLabels(pool, app)},
				Spec:       poolSpec(pool, cpu, guaranteed, corev1.RestartPolicyAlways),
			},
		},
	}
}

func poolJob(name, cpu string, restart corev1.RestartPolicy) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: poolLabels(poolLabel, name)},
				Spec:       poolSpec(poolLabel, cpu, false, restart),
			},
		},
	}
}

func podsByName(pods []corev1.Pod) []corev1.Pod {
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods
}

// spread is the largest minus the smallest requested CPU share over the
// pool's nodes (allocatable in millicores).
func spread(pods []corev1.Pod, pool map[string]float64) float64 {
	used := map[string]float64{}
	for _, p := range pods {
		for _, c := range p.Spec.Containers {
			used[p.Spec.NodeName] += float64(c.Resources.Requests.Cpu().MilliValue())
		}
	}
	lo, hi := 1.0, 0.0
	for n, alloc := range pool {
		s := used[n] / alloc
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi - lo
}

func percentages(fs []float64) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%.0f%%", f*100))
	}
	return strings.Join(out, " -> ")
}
