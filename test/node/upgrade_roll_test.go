package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// roll runs apply, an upgrade or a rollback to the labeler and webhook
// images given, while a probe admits a pod every second and watches the
// node's labels; then it checks the probe, that the pods admitted before
// are untouched, and that three new pods (named prefix-...) get their
// decisions.
func roll(ctx SpecContext, prefix string, before map[string]*corev1.Pod, labeler, webhook string, apply func()) {
	GinkgoHelper()
	probe := startProbe(ctx, prefix+"-roll")
	apply()
	waitRollout(ctx, labeler, webhook)
	probe.stop(ctx)
	sameDecisions(before, admitPods(ctx, prefix))
	stillRunning(ctx, before)
}

// pinnedImages are the labeler and webhook images of repo:tag by digest.
func pinnedImages(ctx context.Context, repo, tag string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, app := range []string{"labeler", "webhook"} {
		out[app] = repo + "/" + app + "@" + headDigest(ctx, repo+"/"+app+":"+tag)
	}
	return out
}

// helm runs the helm binary as the cluster's admin.
func helm(ctx SpecContext, bin string, args ...string) string {
	GinkgoHelper()
	return run(ctx, repoRoot, bin, append(args, "--kubeconfig", cl.Kubeconfig)...)
}

// writeValues writes the chart's values for these images (repo@digest)
// and the suite's plain-HTTP registries.
func writeValues(dir, labeler, webhook string, registries ...string) string {
	GinkgoHelper()
	image := func(ref string) string {
		repo, digest, ok := strings.Cut(ref, "@")
		Expect(ok).To(BeTrue(), "image %q has no digest", ref)
		return fmt.Sprintf("{repository: %q, digest: %q}", repo, digest)
	}
	text := fmt.Sprintf("images:\n  labeler: %s\n  webhook: %s\nwebhook:\n  insecureRegistries: [%q, %q]\n",
		image(labeler), image(webhook), registries[0], registries[1])
	f, err := os.CreateTemp(dir, "values-*.yaml")
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteString(text)
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
	GinkgoWriter.Printf("values %s:\n%s", f.Name(), text)
	return f.Name()
}

// waitRollout waits until the labeler DaemonSet and the webhook Deployment
// run only the given images, every pod updated and ready, and the node
// carries the labels labeler --print finds.
func waitRollout(ctx SpecContext, labeler, webhook string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		failOnPressure(ctx)
		var ds appsv1.DaemonSet
		g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: labelerNamespace, Name: labelerName}, &ds)).To(Succeed())
		g.Expect(ds.Spec.Template.Spec.Containers[0].Image).To(Equal(labeler))
		g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
		g.Expect(ds.Status.UpdatedNumberScheduled).To(Equal(ds.Status.DesiredNumberScheduled))
		g.Expect(ds.Status.NumberReady).To(Equal(ds.Status.DesiredNumberScheduled))
		var d appsv1.Deployment
		g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(webhook))
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.ReadyReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas), "old replicas gone")
		var pods corev1.PodList
		g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(namespace))).To(Succeed())
		for _, p := range pods.Items {
			g.Expect(p.Spec.Containers[0].Image).To(Equal(webhook), "webhook pod %s", p.Name)
		}
		g.Expect(isamatchLabels(ctx, g)).To(Equal(wantLabels))
	}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// admitPods creates the three pods of the install spec under prefix: one
// that requests this node's ISA, one that requests an ISA it lacks, one of
// a multi-arch image with no request; and waits for each decision: the
// first and third Running here, the second unschedulable.
func admitPods(ctx SpecContext, prefix string) map[string]*corev1.Pod {
	GinkgoHelper()
	pods := map[string]*corev1.Pod{
		"has-isa":    testbed.MakePod(prefix+"-has-isa", podNamespace).Image(pauseImage).Annotation(isa.RequestAnnotation, hostRequest()).Obj(),
		"lacks-isa":  testbed.MakePod(prefix+"-lacks-isa", podNamespace).Image(pauseImage).Annotation(isa.RequestAnnotation, "rv64gcv").Obj(),
		"multi-arch": testbed.MakePod(prefix+"-multi-arch", podNamespace).Image(pauseImage).Obj(),
	}
	for _, p := range pods {
		createWhenWebhookAnswers(ctx, p)
	}
	for kind, p := range pods {
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			g.Expect(p.Spec.SchedulingGates).To(BeEmpty(), "released from the gate")
			if kind == "lacks-isa" {
				g.Expect(p.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodScheduled),
					HaveField("Status", corev1.ConditionFalse), HaveField("Reason", corev1.PodReasonUnschedulable))))
				return
			}
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(p.Spec.NodeName).To(Equal(cl.NodeName))
		}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), "pod %s", p.Name)
	}
	return pods
}

// sameDecisions: each pod of after has the node affinity its kind had in
// before, term for term: the group and label values of the two releases
// agree.
func sameDecisions(before, after map[string]*corev1.Pod) {
	GinkgoHelper()
	for kind, b := range before {
		a := after[kind]
		Expect(a.Annotations).To(HaveKey(isa.DecisionAnnotation))
		Expect(cmp.Diff(b.Spec.Affinity, a.Spec.Affinity)).To(BeEmpty(), "%s: affinity of %s (-before +after); decisions %q and %q",
			kind, a.Name, b.Annotations[isa.DecisionAnnotation], a.Annotations[isa.DecisionAnnotation])
		// A pod admitted with the gate (its image not yet in that replica's
		// cache) spreads over no group: its group is not known when it is
		// created, and a gated pod's constraints cannot change
		// (pkg/mutate/spread.go). Which replica had the image cached is
		// not the release's doing: a gated pod is compared with an ungated
		// one on its affinity alone, and must carry the neutral constraint.
		bs, as := spreadOf(b), spreadOf(a)
		if gated(b) != gated(a) {
			for _, p := range []*corev1.Pod{b, a} {
				if gated(p) && len(p.Labels) > 0 {
					Expect(p.Spec.TopologySpreadConstraints).To(ConsistOf(HaveField("TopologyKey", neutralSpreadKey)), "gated pod %s", p.Name)
				}
			}
			continue
		}
		Expect(cmp.Diff(bs, as)).To(BeEmpty(), "%s: topology spread constraints of %s (-before +after)", kind, a.Name)
	}
}

// spreadOf is p's topology spread constraints as the scheduler weighs them:
// none for a pod without labels, which no Service or controller selects,
// so neither the scheduler's default spreading nor a constraint counting
// its siblings has anything to count. Releases before b40d3bc wrote a
// constraint on such a pod; this one writes none.
func spreadOf(p *corev1.Pod) []corev1.TopologySpreadConstraint {
	if len(p.Labels) == 0 {
		return nil
	}
	return p.Spec.TopologySpreadConstraints
}

// neutralSpreadKey is the topology key of a gated pod's spread constraint:
// one no node carries.
const neutralSpreadKey = isa.GroupDomainPrefix + "none"

// gated reports whether admission gated p (its decision, in either stored
// form, names the gate's outcome).
func gated(p *corev1.Pod) bool {
	c, err := contract.ParseDecision(p.Annotations)
	return err == nil && c.Gate != ""
}

// stillRunning: the pods admitted before the roll are the same pods, in the
// same state, with the decision they were admitted with.
func stillRunning(ctx SpecContext, pods map[string]*corev1.Pod) {
	GinkgoHelper()
	for kind, want := range pods {
		var got corev1.Pod
		Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(want), &got)).To(Succeed())
		Expect(got.UID).To(Equal(want.UID), "%s was not recreated", got.Name)
		Expect(got.Annotations[isa.DecisionAnnotation]).To(Equal(want.Annotations[isa.DecisionAnnotation]))
		Expect(cmp.Diff(want.Spec.Affinity, got.Spec.Affinity)).To(BeEmpty())
		if kind != "lacks-isa" {
			Expect(got.Status.Phase).To(Equal(corev1.PodRunning), "%s", got.Name)
			Expect(got.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "%s", got.Name)
		}
	}
}
