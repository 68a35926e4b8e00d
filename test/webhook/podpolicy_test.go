package webhook

import (
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The shipped pod policy (config/webhook/validatingadmissionpolicy.yaml,
// isamatch-webhook-pods) on a real API server: what a stolen webhook token
// may do to a gated pod. Its CEL is also rendered and read by
// TestPodPolicyLimitsAffinityKeys; here the API server evaluates it.
var _ = Describe("The webhook's pod policy", Serial, func() {
	It("lets the webhook's ServiceAccount release a gated pod onto isamatch's keys only, never pin it to a node", func(ctx SpecContext) {
		const ns = "isamatch-system"
		err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		// The suite's webhook leaves this namespace's pods alone: the
		// pods are made here exactly as the spec needs them.
		podNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "podpolicy", Labels: map[string]string{isa.IgnoreLabel: "true"}}}
		Expect(cp.Client.Create(ctx, podNS)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(cp.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(podNS.Name), client.GracePeriodSeconds(0))).To(Succeed())
			Expect(cp.Client.Delete(ctx, podNS)).To(Succeed())
		})
		By("installing config/webhook's RBAC and ValidatingAdmissionPolicies")
		for _, o := range shippedObjects(ctx, filepath.Join("config", "webhook", "rbac.yaml")) {
			create(ctx, o)
		}
		for _, o := range shippedObjects(ctx, filepath.Join("config", "webhook", "validatingadmissionpolicy.yaml")) {
			create(ctx, o)
		}
		cfg := rest.CopyConfig(cp.Config)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + ns + ":isamatch-webhook",
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		}
		asWebhook, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		Expect(err).NotTo(HaveOccurred())

		gated := func(name string) *corev1.Pod {
			GinkgoHelper()
			p := testbed.MakePod(name, podNS.Name).Obj()
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
			Expect(cp.Client.Create(ctx, p)).To(Succeed())
			return p
		}
		// release removes the gate and writes terms as the webhook's
		// ServiceAccount, as the gate controller does.
		release := func(p *corev1.Pod, terms ...corev1.NodeSelectorTerm) error {
			var cur corev1.Pod
			if err := asWebhook.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
				return err
			}
			patch := client.MergeFrom(cur.DeepCopy())
			cur.Spec.SchedulingGates = nil
			cur.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
			return asWebhook.Patch(ctx, &cur, patch)
		}
		in := func(key string, values ...string) corev1.NodeSelectorRequirement {
			return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
		}
		const keysMsg = "the isamatch webhook may only add node-affinity requirements on isa.isamatch.io/, qemu.isamatch.io/ keys"

		By("waiting until the API server enforces the policy")
		// A new gated pod per attempt: one released before the policy
		// took effect carries no gate any more.
		attempt := 0
		Eventually(func() error {
			attempt++
			probe := gated(fmt.Sprintf("probe-%d", attempt))
			return release(probe, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{in(corev1.LabelHostname, "probe-node")}})
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(MatchError(ContainSubstring(keysMsg)))

		By("refusing a node's hostname, and a node by name")
		victim := gated("victim")
		Expect(release(victim, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			in(isa.ArchLabel, "riscv64"), in(corev1.LabelHostname, "attacker-node")}})).To(MatchError(ContainSubstring(keysMsg)))
		Expect(release(victim, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			in("metadata.name", "attacker-node")}})).To(MatchError(ContainSubstring("and no matchFields")))

		By("letting the gate go with isamatch's own keys and kubernetes.io/arch")
		Expect(release(victim, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			in(isa.ArchLabel, "riscv64"), in(corev1.LabelArchStable, "riscv64"),
			{Key: isa.EmuExecLabel(isa.RISCV64), Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}})).To(Succeed())
		var got corev1.Pod
		Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(victim), &got)).To(Succeed())
		Expect(got.Spec.SchedulingGates).To(BeEmpty())
		Expect(got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(HaveLen(1))
	})
})
