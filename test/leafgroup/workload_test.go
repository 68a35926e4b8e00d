package leafgroup

import (
	"context"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// gangJob returns a PodGroup (gang of n, topology constraint on the leaf
// label) and its n pods. No Kueue label: Kueue leaves them alone and the
// stock scheduler places the gang, evaluating isamatch's affinity itself.
func gangJob(name string, n int, request string) (*schedulingv1beta1.PodGroup, []*corev1.Pod) {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(n)},
			},
			SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{
				Topology: []schedulingv1beta1.TopologyConstraint{{Key: leafLabel}},
			},
		},
	}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		p := testbed.MakePod(name+"-"+strconv.Itoa(i), namespace).
			Image(cluster.Registry.Ref("paper/base", "v1")).
			Request(replicaCPU, "64Mi").
			Annotation(isa.BareRequestAnnotation, request).
			Obj()
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &pg.Name}
		pods[i] = p
	}
	return pg, pods
}

// submitGang creates the PodGroup and its pods and registers their deletion.
func submitGang(ctx context.Context, pg *schedulingv1beta1.PodGroup, pods []*corev1.Pod) {
	GinkgoHelper()
	Expect(cluster.Client.Create(ctx, pg)).To(Succeed())
	for _, p := range pods {
		Expect(cluster.Client.Create(ctx, p)).To(Succeed())
	}
	DeferCleanup(func(ctx SpecContext) {
		deleteAll(ctx, pods)
		// A PodGroup keeps a protection finalizer that kube-controller-manager
		// (not run here) removes: delete it without waiting; names are unique.
		Expect(client.IgnoreNotFound(cluster.Client.Delete(ctx, pg))).To(Succeed())
	})
}

// expectUnschedulable waits until the scheduler has tried every pod and
// marked it unschedulable (PodScheduled False), then checks that none binds
// for a while.
func expectUnschedulable(ctx context.Context, pods []*corev1.Pod) {
	GinkgoHelper()
	eventually(ctx, 30*time.Second, func(ctx context.Context) ([]string, error) {
		if err := refresh(ctx, pods); err != nil {
			return nil, err
		}
		var tried []string
		for _, p := range pods {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					tried = append(tried, p.Name)
				}
			}
		}
		return tried, nil
	}).Should(HaveLen(len(pods)), "pods the scheduler found unschedulable")
	AddReportEntry("scheduler on "+pods[0].Name, podScheduledMessage(pods[0]))
	expectNoneBound(ctx, pods, 3*time.Second)
}

// podScheduledMessage is the scheduler's reason for not binding p.
func podScheduledMessage(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

var _ = Describe("the stock scheduler's Workload API: PodGroup gangs with a topology constraint", Ordered, func() {
	It("places a gang in one leaf group, only on nodes isamatch's affinity allows", func(ctx SpecContext) {
		pg, pods := gangJob("gang-3", 3, vector)
		submitGang(ctx, pg, pods)
		expectAllBound(ctx, pods, vector)
		got := placement(pods)
		AddReportEntry("gang of 3 V replicas", describe(got))
		Expect(got).To(HaveLen(1), "one leaf group: %s", describe(got))
	})

	It("ranks groups by their whole size, not by their ISA-capable nodes", func(ctx SpecContext) {
		// rv-c's 5 V nodes hold the gang exactly; the scheduler's placement
		// score (MostAllocated over every node of a domain) prefers rv-b,
		// the group with fewer nodes in all.
		pg, pods := gangJob("gang-5", 5, vector)
		submitGang(ctx, pg, pods)
		expectAllBound(ctx, pods, vector)
		got := placement(pods)
		AddReportEntry("gang of 5 V replicas", describe(got))
		Expect(got).To(Equal(map[string]int{"rv-b": 5}), "placement %s", describe(got))
	})

	It("does not spread a gang larger than any group's V nodes: none starts", func(ctx SpecContext) {
		pg, pods := gangJob("gang-10", 10, vector) // 15 V nodes, at most 6 in a group
		submitGang(ctx, pg, pods)
		expectUnschedulable(ctx, pods)
	})

	It("places one of two competing gangs whole and the other after it", func(ctx SpecContext) {
		// Only rv-b holds 6 V replicas: one gang takes it, the other waits.
		pgA, a := gangJob("gang-a", 6, vector)
		pgB, b := gangJob("gang-b", 6, vector)
		submitGang(ctx, pgA, a)
		submitGang(ctx, pgB, b)
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
		}).Should(BeTrue(), "one gang bound whole")
		expectAllBound(ctx, first, vector)
		Expect(placement(first)).To(Equal(map[string]int{"rv-b": 6}))
		expectUnschedulable(ctx, second)
		complete(ctx, first)
		expectAllBound(ctx, second, vector)
		Expect(placement(second)).To(Equal(map[string]int{"rv-b": 6}), fmt.Sprintf("placement %s", describe(placement(second))))
	})
})
