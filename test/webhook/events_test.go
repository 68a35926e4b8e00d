package webhook

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/podevents"
)

var _ = Describe("Events on decided pods", func() {
	It("say what was decided, which image could not be resolved and that no node can run a request none has, once each", func(ctx SpecContext) {
		// The webhook records them on the leader, elected with a Lease in
		// isamatch-system.
		err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-system"}})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		const ns = "podevents"
		namespaceWith(ctx, ns, reg.Password)
		missing := reg.Ref("app/missing", "v1")
		unresolved := testbed.MakePod("unresolved", ns).Image(reg.Ref(amdImage, "v1")).Container("sidecar", missing).ImagePullSecret(secretName).Obj()
		noNode := testbed.MakePod("nonode", ns).Image(reg.Ref(amdImage, "v1")).Annotation(isa.RequestAnnotation, "x86-64-v4").ImagePullSecret(secretName).Obj()
		for _, pod := range []*corev1.Pod{unresolved, noNode} {
			_, _, err := createPod(ctx, pod)
			Expect(err).NotTo(HaveOccurred(), "create %s", pod.Name)
		}

		cs, err := kubernetes.NewForConfig(cp.Config)
		Expect(err).NotTo(HaveOccurred())
		// byPod lists the namespace's isamatch Events by pod, as
		// "Type Reason fieldPath".
		byPod := func(ctx context.Context) (map[string][]string, []eventsv1.Event) {
			list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			out := map[string][]string{}
			var ours []eventsv1.Event
			for _, e := range list.Items {
				if e.ReportingController != podevents.ReportingController {
					continue
				}
				ours = append(ours, e)
				out[e.Regarding.Name] = append(out[e.Regarding.Name], e.Type+" "+e.Reason+" "+e.Regarding.FieldPath)
			}
			return out, ours
		}
		want := map[string][]string{
			"unresolved": {"Normal IsamatchDecided ", "Warning IsamatchImageUnresolved spec.containers{sidecar}"},
			"nonode":     {"Normal IsamatchDecided ", "Warning IsamatchNoNode "},
		}
		Eventually(func(g Gomega) {
			got, _ := byPod(ctx)
			for pod, reasons := range want {
				g.Expect(got[pod]).To(ConsistOf(reasons), "events of pod %s", pod)
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		_, events := byPod(ctx)
		for _, e := range events {
			Expect(e.Series).To(BeNil(), "%s on %s recorded more than once", e.Reason, e.Regarding.Name)
			switch e.Reason {
			case podevents.ReasonImageUnresolved:
				Expect(e.Note).To(ContainSubstring(missing))
			case podevents.ReasonNoNode:
				Expect(e.Note).To(ContainSubstring("no node satisfies"))
			case podevents.ReasonDecided:
				// The numbers the pod stores, then the readable line the
				// webhook's explainer made again from the pod.
				Expect(e.Note).To(And(ContainSubstring("tiers:"), ContainSubstring("; decision: request="), ContainSubstring(reg.Ref(amdImage, "v1")+" [linux/amd64]")))
			}
			GinkgoWriter.Printf("%s\t%s\t%s\t%s\n", e.Regarding.Name, e.Type, e.Reason, e.Note)
		}

		By("updating the pods: no Event again")
		for _, name := range []string{"unresolved", "nonode"} {
			_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		Consistently(func(g Gomega) {
			got, events := byPod(ctx)
			for pod, reasons := range want {
				g.Expect(got[pod]).To(ConsistOf(reasons), "events of pod %s", pod)
			}
			for _, e := range events {
				g.Expect(e.Series).To(BeNil(), "%s on %s recorded more than once", e.Reason, e.Regarding.Name)
			}
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	})
})
