package rebalance

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/pkg/isa"
)

const (
	// replicas of the rv64imfd Deployment: 20 x 350m fits in the two imfd
	// nodes (2 x 4 CPU) once the filler is gone.
	replicas = 20
	// vReplicas of the rv64imfdv Deployment, whose best tier is the imfdv
	// nodes: nothing better exists for them.
	vReplicas = 4
)

// isaFit moves rv64imfd replicas from vector nodes back to freed best-fit
// nodes, one disruption at a time, within a bounded number of cycles, and
// then stays put: no replacement is evicted. The scheduler runs with its
// defaults (system default topology spreading on).
func isaFit(ctx SpecContext) {
	By("filling the imfd nodes")
	var fillers []*corev1.Pod
	for _, n := range []string{"imfd-1", "imfd-2"} {
		p := fillerPod(n)
		Expect(cp.Client.Create(ctx, p)).To(Succeed())
		fillers = append(fillers, p)
	}

	By(fmt.Sprintf("creating %d rv64imfd replicas (PDB maxUnavailable 1) and %d rv64imfdv replicas", replicas, vReplicas))
	Expect(cp.Client.Create(ctx, deployment("imfd", "rv64imfd", "350m", replicas))).To(Succeed())
	Expect(cp.Client.Create(ctx, deployment("vec", "rv64imfdv", "500m", vReplicas))).To(Succeed())
	Expect(cp.Client.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "imfd", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "imfd"}},
		},
	})).To(Succeed())

	By("waiting until every replica is Ready on a vector node and the budget allows one disruption")
	Eventually(func(g Gomega) {
		for app, want := range map[string]int{"imfd": replicas, "vec": vReplicas} {
			pods := podsOf(ctx, app)
			g.Expect(pods).To(HaveLen(want), app)
			for _, p := range pods {
				g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s on %q not ready", p.Name, p.Spec.NodeName)
				g.Expect(p.Spec.NodeName).To(HavePrefix("imfdv-"), "%s: %s", p.Name, p.Annotations[isa.DecisionAnnotation])
			}
		}
		var pdb policyv1.PodDisruptionBudget
		g.Expect(cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "imfd"}, &pdb)).To(Succeed())
		g.Expect(pdb.Status.DisruptionsAllowed).To(Equal(int32(1)))
	}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	before := podsOf(ctx, "imfd")
	vecBefore := uids(podsOf(ctx, "vec"))

	By("removing the filler")
	for _, p := range fillers {
		Expect(cp.Client.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		for _, p := range fillers {
			err := cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "filler %s still there", p.Name)
		}
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

	By("waiting until the replicas are older than the policy's minPodAge")
	Expect(rebalancecluster.WaitOlderThan(ctx, before, minPodAge, time.Minute)).To(Succeed())

	rec := startRecorder(ctx)
	policy := testPolicy()

	// Each cycle moves what the budget lets it within its disruption
	// wait; on a slow machine that may take more than one. The outcome is
	// judged once it is reached, within maxCycles.
	By(fmt.Sprintf("running rebalancer cycles until every rv64imfd replica runs on an imfd node (at most %d)", maxCycles))
	var onVector []string
	var took []string
	for i := 1; i <= maxCycles; i++ {
		took = append(took, runCycle(ctx, policy, fmt.Sprintf("cycle-%d", i)).Round(100*time.Millisecond).String())
		pods := settle(ctx)
		onVector = onVector[:0]
		for _, p := range pods {
			if !strings.HasPrefix(p.Spec.NodeName, "imfd-") {
				onVector = append(onVector, fmt.Sprintf("%s on %s (created %s, decision %q)", p.Name, p.Spec.NodeName, p.CreationTimestamp.Format(time.TimeOnly), p.Annotations[isa.DecisionAnnotation]))
			}
		}
		if len(onVector) == 0 {
			break
		}
	}
	evicted := rec.Evicted()
	AddReportEntry("cycles", fmt.Sprintf("%d cycles (%v), %d evictions, fewest available rv64imfd replicas %d of %d", len(took), took, len(evicted), rec.MinAvailable(), replicas))
	GinkgoWriter.Printf("%d cycles (%v), %d evictions, fewest available %d of %d\n", len(took), took, len(evicted), rec.MinAvailable(), replicas)

	Expect(onVector).To(BeEmpty(), "every rv64imfd replica runs on an imfd node within %d cycles", maxCycles)
	Expect(evicted).To(ConsistOf(podNames(before)), "exactly the replicas that had a better place were evicted, each once: no replacement was evicted (no move undone)")
	Expect(rec.MinAvailable()).To(BeNumerically(">=", replicas-1), "the PodDisruptionBudget (maxUnavailable 1) held throughout")
	Expect(uids(podsOf(ctx, "vec"))).To(Equal(vecBefore), "no rv64imfdv replica moved: none had a better place")

	By("running one more cycle once the replacements are older than minPodAge")
	all := append(podsOf(ctx, "imfd"), podsOf(ctx, "vec")...)
	Expect(rebalancecluster.WaitOlderThan(ctx, all, minPodAge, time.Minute)).To(Succeed())
	runCycle(ctx, policy, "settled")
	Expect(rec.Evicted()).To(HaveLen(len(evicted)), "a cycle after the moves evicts nothing")
	Expect(uids(append(podsOf(ctx, "imfd"), podsOf(ctx, "vec")...))).To(Equal(uids(all)))
}

// maxCycles bounds the cycles the ISAFit spec may take.
const maxCycles = 5

// minPodAge is testPolicy's cool-down.
const minPodAge = time.Second

// settle waits until the rv64imfd Deployment has all its replicas Ready,
// none terminating, and its budget allows a disruption again; it returns
// the replicas.
func settle(ctx context.Context) []corev1.Pod {
	GinkgoHelper()
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = podsOf(ctx, "imfd")
		g.Expect(pods).To(HaveLen(replicas))
		for _, p := range pods {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "%s terminating", p.Name)
			g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not ready", p.Name)
		}
		var pdb policyv1.PodDisruptionBudget
		g.Expect(cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "imfd"}, &pdb)).To(Succeed())
		g.Expect(pdb.Status.DisruptionsAllowed).To(Equal(int32(1)))
	}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	return pods
}

// fillerPod returns a bare pod bound to node that requests all of its 4 CPUs
// and that the webhook leaves alone.
func fillerPod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "filler-" + node, Namespace: ns, Labels: map[string]string{"app": "filler", isa.IgnoreLabel: "true"}},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: reg.Ref(image, "v1"), Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			}}},
		},
	}
}

// deployment returns a Deployment of n pods labelled app=app asking for
// request natively, each requesting cpu.
func deployment(app, request, cpu string, n int32) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{isa.RequestAnnotation: request}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: reg.Ref(image, "v1"), Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
				}}}},
			},
		},
	}
}

// testPolicy writes the shipped policy (config/components/rebalance) with
// ISAFit's limits raised so that one cycle may move every replica, and its
// cool-down shortened to a second (the pods are seconds old). Everything
// else, the evictor and the disruption wait included, is as shipped.
func testPolicy() string {
	GinkgoHelper()
	path, err := cluster.Policy("policy.yaml", map[string]any{
		"maxEvictionsPerCycle": replicas,
		"maxEvictionsPerNode":  replicas,
		"minPodAge":            minPodAge.String(),
	})
	Expect(err).NotTo(HaveOccurred())
	return path
}

// runCycle runs the rebalancer once (--descheduling-interval=0: one cycle,
// then exit) and returns how long it took.
func runCycle(ctx context.Context, policy, name string) time.Duration {
	GinkgoHelper()
	took, log, err := cluster.RunCycle(ctx, policy, name)
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			out, _ := os.ReadFile(log)
			AddReportEntry("rebalancer "+name+" log", string(out))
		}
	})
	Expect(err).NotTo(HaveOccurred())
	return took
}

// startRecorder records evictions in ns from now until the spec ends
// (rebalancecluster.Recorder), and the availability of the rv64imfd
// replicas.
func startRecorder(ctx context.Context) *rebalancecluster.Recorder {
	GinkgoHelper()
	r, err := rebalancecluster.StartRecorder(ctx, c, ns, "imfd")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(r.Stop)
	return r
}

func podNames(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func uids(pods []corev1.Pod) []types.UID {
	out := make([]types.UID, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.UID)
	}
	slices.Sort(out)
	return out
}
