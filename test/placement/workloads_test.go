package placement

import (
	"fmt"
	"maps"
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
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/pkg/isa"
)

// workload is one controller-owned workload of the spec.
type workload struct {
	kind, name string
	// request is the pod's isa.request; "" asks nothing (the multi-arch
	// image's platforms decide).
	request  string
	replicas int32
}

// cpu is every pod's CPU request.
const cpu = "250m"

// maxSkew is the scheduler's default maxSkew for hostnames.
const maxSkew = 3

var workloads = []workload{
	{"Deployment", "web", "", 12},
	{"Deployment", "vec", "rv64gcv", 8},
	{"Deployment", "api", "arm64", 6},
	{"StatefulSet", "db", "x86-64-v2", 6},
	{"Job", "batch", "rv64gc", 6},
}

var _ = Describe("Controller-owned workloads under the scheduler's defaults", func() {
	It("land on a best-fit node, correct, and spread over the best-fit nodes within the default max skew", func(ctx SpecContext) {
		By("creating Deployments and a StatefulSet with Services, and a Job")
		v := run(ctx, workloads)
		Expect(v.offBest).To(BeEmpty(), "every pod on a best-fit node (each workload's best-fit nodes have room for all of it)")
		Expect(v.skewed).To(BeEmpty(), "replicas spread over their best-fit group within the default max skew %d", maxSkew)
	})

	It("spread over the zones of their best-fit nodes, one replica per zone", func(ctx SpecContext) {
		// Three replicas on six best-fit nodes, two per zone: spreading
		// over hostnames alone puts two of them in one zone more often
		// than not; the defaults spread them over the zones too.
		var ws []workload
		for k := range 4 {
			ws = append(ws, workload{"Deployment", fmt.Sprintf("zoned-%d", k), "rv64gc_zba_zbb_zbs", 3})
		}
		By("creating four Deployments of three replicas whose best-fit nodes lie in three zones")
		v := run(ctx, ws)
		Expect(v.offBest).To(BeEmpty(), "every pod on a best-fit node")
		zoneOf := map[string]string{}
		for _, n := range nodes {
			zoneOf[n.Name] = n.Zone
		}
		for _, w := range ws {
			perZone := map[string]int{}
			for node, c := range v.byWorkload[w.name] {
				perZone[zoneOf[node]] += c
			}
			Expect(perZone).To(Equal(map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}),
				"%s: replicas per zone (pods per node: %v)", w.name, v.byWorkload[w.name])
		}
	})
})

// run creates ws, waits until all their pods are bound and Ready, and
// judges them: every pod on a node that can run it, with isamatch's
// decision.
func run(ctx SpecContext, ws []workload) verdict {
	GinkgoHelper()
	want := 0
	var names []string
	for _, w := range ws {
		for _, obj := range objects(w) {
			Expect(cluster.Client.Create(ctx, obj)).To(Succeed(), "%s %s", w.kind, w.name)
		}
		want += int(w.replicas)
		names = append(names, w.name)
	}
	sel, err := labels.Parse(fmt.Sprintf("app in (%s)", strings.Join(names, ",")))
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("waiting until all %d pods are bound and Ready", want))
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		var list corev1.PodList
		g.Expect(cluster.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
		pods = list.Items
		g.Expect(pods).To(HaveLen(want))
		for _, p := range pods {
			g.Expect(rebalancecluster.IsReady(&p)).To(BeTrue(), "%s not Ready (node %q)", p.Name, p.Spec.NodeName)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())

	v := judge(pods, ws)
	AddReportEntry("placement", v.report())
	GinkgoWriter.Println(v.report())
	Expect(v.wrong).To(BeEmpty(), "every pod on a node that can run it")
	Expect(v.undecided).To(BeEmpty(), "every pod admitted with isamatch's decision")
	return v
}

// objects returns the workload's objects: the controller, and a Service
// for Deployments and StatefulSets (the scheduler's default spreading
// counts the pods a Service selects).
func objects(w workload) []client.Object {
	labels := map[string]string{"app": w.name}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: cluster.ImageRef(), Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
	if w.request != "" {
		tmpl.Annotations = map[string]string{isa.RequestAnnotation: w.request}
	}
	meta := metav1.ObjectMeta{Name: w.name, Namespace: ns}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	service := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
	}}
	switch w.kind {
	case "Deployment":
		return []client.Object{service, &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: &w.replicas, Selector: selector, Template: tmpl,
		}}}
	case "StatefulSet":
		return []client.Object{service, &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: &w.replicas, Selector: selector, Template: tmpl, ServiceName: w.name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
		}}}
	case "Job":
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		return []client.Object{&batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
			Parallelism: &w.replicas, Completions: &w.replicas, Template: tmpl,
		}}}
	}
	Fail("unknown kind " + w.kind)
	return nil
}

// verdict is the oracle's judgement of the placements.
type verdict struct {
	pods                              int
	wrong, offBest, skewed, undecided []string
	// byWorkload counts each workload's pods per node.
	byWorkload map[string]map[string]int
}

// judge checks each pod against the oracle: the node must run what the
// pod needs (its request, or the base ISA of the node's architecture for
// the multi-arch image) and have the highest instruction affinity of the
// nodes of that architecture that run it; per workload and ISA group used,
// the replica counts of the group's nodes may differ by maxSkew at most.
func judge(pods []corev1.Pod, ws []workload) verdict {
	GinkgoHelper()
	isaOf := map[string]oracle.ISA{}
	kind := map[string]string{}
	for _, n := range nodes {
		i, err := oracle.Parse(n.ISA)
		Expect(err).NotTo(HaveOccurred(), n.ISA)
		isaOf[n.Name], kind[n.Name] = i, n.ISA
	}
	requests := map[string]string{}
	for _, w := range ws {
		requests[w.name] = w.request
	}
	v := verdict{pods: len(pods), byWorkload: map[string]map[string]int{}}
	for _, p := range pods {
		app, node := p.Labels["app"], p.Spec.NodeName
		if p.Annotations[isa.DecisionAnnotation] == "" {
			v.undecided = append(v.undecided, p.Name)
		}
		if v.byWorkload[app] == nil {
			v.byWorkload[app] = map[string]int{}
		}
		v.byWorkload[app][node]++
		got := isaOf[node]
		need, err := oracle.FromPlatform("linux", got.Arch, "")
		Expect(err).NotTo(HaveOccurred())
		if r := requests[app]; r != "" {
			need, err = oracle.Parse(r)
			Expect(err).NotTo(HaveOccurred())
		}
		if !oracle.Satisfies(got, need) {
			v.wrong = append(v.wrong, fmt.Sprintf("%s on %s (%s)", p.Name, node, kind[node]))
			continue
		}
		best, bestNode := 0.0, ""
		for _, n := range nodes {
			i := isaOf[n.Name]
			if i.Arch == got.Arch && oracle.Satisfies(i, need) && oracle.Affinity(i, need) > best {
				best, bestNode = oracle.Affinity(i, need), n.Name
			}
		}
		if a := oracle.Affinity(got, need); a < best-1e-9 {
			v.offBest = append(v.offBest, fmt.Sprintf("%s on %s (%s, affinity %.2f), best %s (%s, %.2f)", p.Name, node, kind[node], a, bestNode, kind[bestNode], best))
		}
	}
	for app, counts := range v.byWorkload {
		used := map[string]bool{}
		for node := range counts {
			used[kind[node]] = true
		}
		for k := range used {
			lo, hi := -1, 0
			for _, n := range nodes {
				if n.ISA != k {
					continue
				}
				c := counts[n.Name]
				if lo < 0 || c < lo {
					lo = c
				}
				hi = max(hi, c)
			}
			if hi-lo > maxSkew {
				v.skewed = append(v.skewed, fmt.Sprintf("%s on %s nodes: %d to %d replicas per node", app, k, lo, hi))
			}
		}
	}
	return v
}

// report is one line per workload: pods per node.
func (v verdict) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods: %d on a node that cannot run them, %d off best fit, %d skewed groups\n", v.pods, len(v.wrong), len(v.offBest), len(v.skewed))
	for _, app := range slices.Sorted(maps.Keys(v.byWorkload)) {
		counts := v.byWorkload[app]
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(counts)) {
			parts = append(parts, fmt.Sprintf("%s:%d", n, counts[n]))
		}
		fmt.Fprintf(&b, "  %s: %s\n", app, strings.Join(parts, " "))
	}
	return b.String()
}
