package leafgroup

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/leafcluster"
)

// Kueue's keys (internal/leafcluster).
const (
	kueueGroupLabel    = leafcluster.KueueGroupLabel
	kueueAdmissionGate = leafcluster.KueueAdmissionGate
	kueueAPIVersion    = leafcluster.KueueAPIVersion
)

// queues are the queues createKueueQueues created: the pods name the
// LocalQueue.
var queues leafcluster.Queues

// createKueueQueues installs the objects of leafcluster.KueueComponent as
// shipped, the LocalQueue in the suite's namespace.
func createKueueQueues(ctx context.Context, c client.Client) error {
	var err error
	queues, err = leafcluster.CreateQueues(ctx, c, cluster.RepoRoot, namespace)
	return err
}

// kueueJob returns n pods forming one Kueue pod group with a preferred
// topology at the leaf level (leafcluster.Job).
func kueueJob(name string, n int, request string) []*corev1.Pod {
	return leafcluster.Job(name, namespace, n, request, cluster.Registry.Ref("paper/base", "v1"), queues.Local)
}

// submit creates the pods and registers their deletion.
func submit(ctx context.Context, pods []*corev1.Pod) {
	GinkgoHelper()
	for _, p := range pods {
		Expect(cluster.Client.Create(ctx, p)).To(Succeed())
	}
	DeferCleanup(func(ctx SpecContext) {
		deleteAll(ctx, pods)
		expectQueueIdle(ctx)
	})
}

// expectQueueIdle waits until the ClusterQueue reports no workload holding
// quota. Kueue reports it from the cache its scheduler reads, so the next
// spec's job is never tried against nodes a finished job held: Kueue would
// set it aside as inadmissible and might not retry it.
func expectQueueIdle(ctx context.Context) {
	GinkgoHelper()
	cq := &unstructured.Unstructured{}
	cq.SetAPIVersion(kueueAPIVersion)
	cq.SetKind("ClusterQueue")
	// Kueue releases a group's quota once its reconcilers have seen every
	// pod gone and finished the Workload; on a loaded 2-core machine that
	// has taken more than 30 seconds.
	eventually(ctx, 2*time.Minute, func(ctx context.Context) (int64, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKey{Name: queues.Cluster}, cq); err != nil {
			return -1, err
		}
		reserving, _, err := unstructured.NestedInt64(cq.Object, "status", "reservingWorkloads")
		if err != nil {
			return -1, err
		}
		admitted, _, err := unstructured.NestedInt64(cq.Object, "status", "admittedWorkloads")
		return reserving + admitted, err
	}).Should(BeZero(), func() string {
		return fmt.Sprintf("workloads holding quota in ClusterQueue %s; the namespace's Workloads: %s", queues.Cluster, workloadStates(ctx))
	})
}

// workloadStates describes the namespace's Kueue Workloads: name, deletion
// and conditions, for a failure message.
func workloadStates(ctx context.Context) string {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(kueueAPIVersion)
	list.SetKind("WorkloadList")
	if err := cluster.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return "list: " + err.Error()
	}
	var out []string
	for _, w := range list.Items {
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		var cs []string
		for _, c := range conds {
			m, _ := c.(map[string]any)
			cs = append(cs, fmt.Sprintf("%v=%v(%v)", m["type"], m["status"], m["reason"]))
		}
		out = append(out, fmt.Sprintf("%s deleting=%v finalizers=%v [%s]", w.GetName(), w.GetDeletionTimestamp() != nil, w.GetFinalizers(), strings.Join(cs, " ")))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// unfinishedWorkloads names the namespace's Workloads that Kueue admitted
// and has not finished: they hold quota.
func unfinishedWorkloads(ctx context.Context) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(kueueAPIVersion)
	list.SetKind("WorkloadList")
	if err := cluster.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var out []string
	for _, w := range list.Items {
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		admitted, finished := false, false
		for _, c := range conds {
			m, _ := c.(map[string]any)
			switch {
			case m["type"] == "Admitted" && m["status"] == "True":
				admitted = true
			case m["type"] == "Finished" && m["status"] == "True":
				finished = true
			}
		}
		if admitted && !finished {
			out = append(out, w.GetName())
		}
	}
	return out, nil
}

// gated reports whether every pod still waits for Kueue's admission.
func gated(ctx context.Context, pods []*corev1.Pod) (bool, error) {
	if err := refresh(ctx, pods); err != nil {
		return false, err
	}
	for _, p := range pods {
		has := false
		for _, g := range p.Spec.SchedulingGates {
			has = has || g.Name == kueueAdmissionGate
		}
		if !has {
			return false, nil
		}
	}
	return true, nil
}

// expectKueueWaiting waits until Kueue has tried and refused the group's
// Workload (its QuotaReserved condition False, reason Pending), then checks
// that no pod binds for a while and that every pod keeps Kueue's gate.
func expectKueueWaiting(ctx context.Context, group string, pods []*corev1.Pod) {
	GinkgoHelper()
	wl := &unstructured.Unstructured{}
	wl.SetAPIVersion(kueueAPIVersion)
	wl.SetKind("Workload")
	var msg string
	eventually(ctx, 30*time.Second, func(ctx context.Context) (string, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: group}, wl); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		conds, _, err := unstructured.NestedSlice(wl.Object, "status", "conditions")
		if err != nil {
			return "", err
		}
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "QuotaReserved" {
				msg, _ = m["message"].(string)
				return fmt.Sprintf("%v/%v", m["status"], m["reason"]), nil
			}
		}
		return "", nil
	}).Should(Equal("False/Pending"), "Workload %s refused by Kueue", group)
	AddReportEntry("Kueue on "+group, msg)
	expectNoneBound(ctx, pods, 3*time.Second)
	Expect(gated(ctx, pods)).To(BeTrue(), "every waiting pod keeps Kueue's admission gate")
}

var _ = Describe("Kueue Topology Aware Scheduling over plain pod groups", Ordered, func() {
	BeforeAll(func() { requireKueue() })

	It("carries isamatch's affinity into the pods Kueue groups", func(ctx SpecContext) {
		pods := kueueJob("affinity", 1, vector)
		submit(ctx, pods)
		expectAllBound(ctx, pods, vector)
		a := pods[0].Spec.Affinity
		Expect(a).NotTo(BeNil())
		Expect(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution).NotTo(BeNil(), "isamatch's required affinity")
		Expect(pods[0].Spec.NodeSelector).To(HaveKey(corev1.LabelHostname), "Kueue's topology assignment")
	})

	DescribeTable("places a job in the smallest leaf group whose ISA-capable nodes hold it",
		func(ctx SpecContext, n int, request string, want map[string]int) {
			pods := kueueJob(fmt.Sprintf("fit-%d-%s", n, request), n, request)
			submit(ctx, pods)
			expectAllBound(ctx, pods, request)
			Expect(placement(pods)).To(Equal(want), "placement %s", describe(placement(pods)))
		},
		// rv-a has 4 V nodes, rv-b 6 of 8, rv-c 5 of 16.
		Entry("3 V replicas: rv-a (4 V nodes)", 3, vector, map[string]int{"rv-a": 3}),
		Entry("5 V replicas: rv-c (5 of its 16 nodes have V), not rv-b (8 nodes, 6 with V)", 5, vector, map[string]int{"rv-c": 5}),
		Entry("6 V replicas: rv-b", 6, vector, map[string]int{"rv-b": 6}),
		Entry("7 rv64gc replicas: rv-b, all 8 of its nodes qualify", 7, plain, map[string]int{"rv-b": 7}),
		Entry("12 rv64gc replicas: rv-c", 12, plain, map[string]int{"rv-c": 12}),
	)

	It("spreads a job larger than any group's V nodes over the fewest groups, only on V nodes", func(ctx SpecContext) {
		pods := kueueJob("spread", 10, vector)
		submit(ctx, pods)
		expectAllBound(ctx, pods, vector)
		got := placement(pods)
		AddReportEntry("spread of 10 V replicas", describe(got))
		// Kueue's BestFit: the groups by free V nodes, largest first (rv-b,
		// 6), until the rest fits one group; for that last one the best
		// fit (rv-a's 4 before rv-c's 5).
		Expect(got).To(Equal(map[string]int{"rv-b": 6, "rv-a": 4}), "placement %s", describe(got))
	})

	It("starts no pod of a job above the free V capacity, and starts it whole once capacity frees", func(ctx SpecContext) {
		first := kueueJob("holder", 10, vector)
		submit(ctx, first)
		expectAllBound(ctx, first, vector)

		waiting := kueueJob("waiter", 8, vector) // 15 V nodes, 10 taken
		submit(ctx, waiting)
		expectKueueWaiting(ctx, "waiter", waiting)

		complete(ctx, first)
		expectAllBound(ctx, waiting, vector)
	})

	It("never starts a job above the total V capacity", func(ctx SpecContext) {
		pods := kueueJob("too-big", 16, vector) // 15 V nodes
		submit(ctx, pods)
		expectKueueWaiting(ctx, "too-big", pods)
	})

	It("admits one of two competing jobs whole and the other after it", func(ctx SpecContext) {
		a, b := kueueJob("compete-a", 9, vector), kueueJob("compete-b", 9, vector) // 18 > 15 V nodes
		submit(ctx, a)
		submit(ctx, b)
		var first, second []*corev1.Pod
		eventually(ctx, 90*time.Second, func(ctx context.Context) (bool, error) {
			na, err := bound(ctx, a)
			if err != nil {
				return false, err
			}
			nb, err := bound(ctx, b)
			if err != nil {
				return false, err
			}
			switch {
			case na == len(a):
				first, second = a, b
			case nb == len(b):
				first, second = b, a
			}
			return first != nil, nil
		}).Should(BeTrue(), "one job bound whole")
		expectAllBound(ctx, first, vector)
		expectKueueWaiting(ctx, second[0].Labels[kueueGroupLabel], second)
		complete(ctx, first)
		expectAllBound(ctx, second, vector)
	})
})
