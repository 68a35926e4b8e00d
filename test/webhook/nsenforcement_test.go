package webhook

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// A namespace's isa.EnforcementLabel against the suite's webhook, which
// denies (--enforcement=deny) and lets namespaces choose deny or warn (the
// default --namespace-enforcement).
var _ = Describe("A namespace's enforcement label", func() {
	It("turns denials into warnings for its own pods only, and follows the label when it changes", func(ctx SpecContext) {
		const warned, plain = "nsmode-warn", "nsmode-plain"
		for _, ns := range []string{warned, plain} {
			n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			if ns == warned {
				n.Labels = map[string]string{isa.EnforcementLabel: mutate.EnforcementWarn}
			}
			Expect(cp.Client.Create(ctx, n)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) {
				Expect(client.IgnoreNotFound(cp.Client.Delete(ctx, n))).To(Succeed())
			})
		}
		// A request no node can serve: denied in deny mode, warned in warn
		// mode. The pod names no image, so no registry is involved.
		malformed := func(ns, name string) *corev1.Pod {
			p := testbed.MakePod(name, ns).Obj()
			p.Annotations = map[string]string{isa.BareRequestAnnotation: "rv64q!"}
			return p
		}

		By("a namespace created a moment ago, labelled warn: the pod is admitted with the would-deny warning")
		created, warnings, err := createPod(ctx, malformed(warned, "first"))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(warnings, "\n")).To(ContainSubstring("isamatch would deny this pod"))
		c, err := contract.ParseDecision(created.Annotations)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.WouldDeny).To(BeTrue(), "decision %+v", c)
		Expect(created.Spec.Affinity).To(BeNil())

		By("the namespace beside it, without the label: the cluster's deny")
		_, _, err = createPod(ctx, malformed(plain, "first"))
		Expect(err).To(MatchError(ContainSubstring("rv64q!")))

		By("the label changed to deny: the next pods are denied")
		var n corev1.Namespace
		Expect(cp.Client.Get(ctx, client.ObjectKey{Name: warned}, &n)).To(Succeed())
		n.Labels[isa.EnforcementLabel] = mutate.EnforcementDeny
		Expect(cp.Client.Update(ctx, &n)).To(Succeed())
		Eventually(func() error {
			p := malformed(warned, "")
			p.Name, p.GenerateName = "", "after-"
			_, _, err := createPod(ctx, p)
			return err
		}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(time.Second).
			Should(MatchError(ContainSubstring("rv64q!")), "the webhook never saw the label change")
	})
})
