package node

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

const (
	labelerName      = "isamatch-labeler"
	labelerNamespace = "isamatch-labeler"
	webhookName      = "isamatch-webhook"
	// podNamespace is where the specs' own pods go: the webhook mutates
	// every namespace but kube-system and its own.
	podNamespace = "default"
)

// The specs install and remove isamatch with the quickstart's commands
// (docs/quickstart.md) and run its steps between.
var _ = Describe("kubectl apply -k config on a real node", Ordered, func() {
	var qs *quickstart
	BeforeAll(func(ctx SpecContext) {
		qs = newQuickstart(ctx, GinkgoT().TempDir())
	})

	It("installs with the quickstart's commands, rollouts complete", func(ctx SpecContext) {
		qs.mustRun(ctx, qs.blocks[qsInstall])
	}, NodeTimeout(10*time.Minute))

	It("installs the release's images, pinned by the digests its images.txt lists", func(ctx SpecContext) {
		listed, err := os.ReadFile(filepath.Join(dist, "images.txt"))
		Expect(err).NotTo(HaveOccurred())
		var d appsv1.Deployment
		Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
		var ds appsv1.DaemonSet
		Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: labelerNamespace, Name: labelerName}, &ds)).To(Succeed())
		for app, image := range map[string]string{"webhook": d.Spec.Template.Spec.Containers[0].Image, "labeler": ds.Spec.Template.Spec.Containers[0].Image} {
			repo, digest, ok := strings.Cut(image, "@")
			Expect(ok).To(BeTrue(), "%s image %q is not pinned by digest", app, image)
			Expect(repo).To(Equal(reg.Host + "/isamatch/" + app))
			Expect(string(listed)).To(ContainSubstring(repo+":"+imageTag+"@"+digest), "images.txt lists %s", image)
		}
	})

	It("runs the labeler DaemonSet pod, which labels the node like labeler --print on the host", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			var ds appsv1.DaemonSet
			g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: labelerNamespace, Name: labelerName}, &ds)).To(Succeed())
			g.Expect(ds.Status.NumberReady).To(Equal(int32(1)), "labeler pods ready")
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(isamatchLabels(ctx, g)).To(Equal(wantLabels))
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string {
			return cmp.Diff(wantLabels, isamatchLabels(ctx, Default)) + " (-labeler --print +node labels)"
		})
	})

	It("makes the webhook Deployment ready with a certificate of its own", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(Equal(*d.Spec.Replicas), "webhook replicas ready")
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		// The kubelet gives the webhook its memory request (downward API),
		// which it makes the Go runtime's soft memory limit; it logs that
		// when it starts, before it is ready.
		var d appsv1.Deployment
		Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
		request := d.Spec.Template.Spec.Containers[0].Resources.Requests.Memory()
		Expect(request.IsZero()).To(BeFalse(), "the webhook container has a memory request")
		logs := kubectlRun(ctx, "-n", namespace, "logs", "deploy/"+webhookName)
		Expect(logs).To(ContainSubstring("Soft memory limit set to the container's memory request"))
		Expect(logs).To(ContainSubstring(fmt.Sprintf("bytes=%d", request.Value())))

		var secret corev1.Secret
		Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName + "-cert"}, &secret)).To(Succeed())
		block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
		Expect(block).NotTo(BeNil(), "the rotator wrote %s to the Secret", corev1.TLSCertKey)
		cert, err := x509.ParseCertificate(block.Bytes)
		Expect(err).NotTo(HaveOccurred())
		Expect(cert.DNSNames).To(ContainElement(webhookName + "." + namespace + ".svc"))

		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: "isamatch"}, &mwc)).To(Succeed())
		Expect(mwc.Webhooks).NotTo(BeEmpty())
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(mwc.Webhooks[0].ClientConfig.CABundle)).To(BeTrue(), "the rotator injected a CA bundle")
		_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: webhookName + "." + namespace + ".svc"})
		Expect(err).NotTo(HaveOccurred(), "the injected CA signs the serving certificate")
	})

	It("runs a pod that requests an ISA this node has", func(ctx SpecContext) {
		request := hostRequest()
		pod := testbed.MakePod("has-isa", podNamespace).Image(pauseImage).Annotation(isa.RequestAnnotation, request).Obj()
		createWhenWebhookAnswers(ctx, pod)
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Annotations).To(HaveKey(isa.DecisionAnnotation), "the webhook decided")
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(pod.Spec.NodeName).To(Equal(cl.NodeName))
		GinkgoWriter.Printf("request %q: %s\n", request, pod.Annotations[isa.DecisionAnnotation])
	})

	It("keeps a pod that requests an ISA this node lacks Pending, and the decision says why", func(ctx SpecContext) {
		pod := testbed.MakePod("lacks-isa", podNamespace).Image(pauseImage).Annotation(isa.RequestAnnotation, "rv64gcv").Obj()
		createWhenWebhookAnswers(ctx, pod)
		decision, err := contract.ParseDecision(pod.Annotations)
		Expect(err).NotTo(HaveOccurred())
		Expect(decision.NoNode).To(BeTrue(), "the decision %q says no node has rv64gcv", pod.Annotations[isa.DecisionAnnotation])
		Expect(pod.Spec.Affinity).NotTo(BeNil())
		Expect(pod.Spec.Affinity.NodeAffinity).NotTo(BeNil())
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodScheduled), HaveField("Status", corev1.ConditionFalse),
				HaveField("Reason", corev1.PodReasonUnschedulable))))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Spec.NodeName).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			note, err := testbed.DecisionNote(ctx, cl.Client, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(note).To(ContainSubstring(`request="rv64gcv"`), "the pod's IsamatchDecided Event")
			GinkgoWriter.Printf("decision: %s\n", note)
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("runs a pod of a multi-arch image without a request on this node", func(ctx SpecContext) {
		pod := testbed.MakePod("multi-arch", podNamespace).Image(pauseImage).Obj()
		createWhenWebhookAnswers(ctx, pod)
		Expect(pod.Annotations).To(HaveKey(isa.DecisionAnnotation))
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("puts back a label removed from the node", func(ctx SpecContext) {
		var node corev1.Node
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node)).To(Succeed())
		Expect(node.Labels).To(HaveKey(isa.GroupLabel))
		patch := client.MergeFrom(node.DeepCopy())
		delete(node.Labels, isa.GroupLabel)
		Expect(cl.Client.Patch(ctx, &node, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(isamatchLabels(ctx, g)).To(Equal(wantLabels))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("shows what the node runs, as the quickstart's step 2", func(ctx SpecContext) {
		out := qs.mustRun(ctx, qs.blocks[qsNodes])
		Expect(out).To(ContainSubstring(cl.NodeName))
		Expect(out).To(ContainSubstring(isa.ArchLabel + "=amd64"))
	})

	It("runs the quickstart's pod and explains its decision", func(ctx SpecContext) {
		qs.mustRun(ctx, qs.blocks[qsPod])
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "isa-demo", Name: "fits"}}
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(pod.Annotations).To(HaveKey(isa.DecisionAnnotation), "the webhook decided")
		// The Event comes from the webhook's leader a moment later.
		Eventually(func(g Gomega) {
			out, err := qs.run(ctx, qs.blocks[qsExplain])
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(out).To(ContainSubstring(pod.Annotations[isa.DecisionAnnotation]), "the decision annotation")
			g.Expect(out).To(MatchRegexp(`IsamatchDecided|IsamatchReleased`), "the decision's Event")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("keeps the quickstart's pod whose request the node lacks Pending, with IsamatchNoNode", func(ctx SpecContext) {
		qs.mustRun(ctx, qs.lines(qsNoNode, 0, 1))
		Eventually(func(g Gomega) {
			out, err := qs.run(ctx, qs.lines(qsNoNode, 2, 2))
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(out).To(ContainSubstring("IsamatchNoNode"))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("refuses the quickstart's malformed request, naming the bad token", func(ctx SpecContext) {
		out, err := qs.run(ctx, qs.blocks[qsTypo])
		Expect(err).To(HaveOccurred(), "kubectl run of a malformed request fails:\n%s", out)
		Expect(out).To(ContainSubstring(`"x86" is malformed`))
		Expect(out).To(ContainSubstring("did you mean x86-64 or amd64"))
	})

	It("removes everything with kubectl delete -k", func(ctx SpecContext) {
		for _, name := range []string{"has-isa", "lacks-isa", "multi-arch"} {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: podNamespace, Name: name}}
			Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, pod))).To(Succeed())
		}
		// The quickstart's namespace, then config.
		qs.mustRun(ctx, qs.lines(qsUninstall, 0, 1))
		for _, obj := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: labelerNamespace}},
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "isamatch"}},
			&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: labelerName}},
			&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "isamatch-node-labels"}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: labelerName}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: webhookName}},
		} {
			Eventually(func() bool {
				return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(BeTrue(), "%T %s is gone", obj, obj.GetName())
		}
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(cl.Client.List(ctx, &pods)).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty(), "every pod stopped")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("removes every isamatch label and annotation from the node with the uninstall Job, and no other", func(ctx SpecContext) {
		var before corev1.Node
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &before)).To(Succeed())
		Expect(isamatchKeys(before.Labels)).NotTo(BeEmpty(), "the labeler's labels are still on the node after kubectl delete -k")

		// The quickstart's uninstall Job, until it completes.
		qs.mustRun(ctx, qs.lines(qsUninstall, 2, 3))

		var after corev1.Node
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &after)).To(Succeed())
		Expect(isamatchKeys(after.Labels)).To(BeEmpty(), "labels left")
		Expect(isamatchKeys(after.Annotations)).To(BeEmpty(), "annotations left")
		Expect(after.Labels).To(Equal(withoutIsamatch(before.Labels)), "the node's other labels are kept")
		Expect(after.Annotations).To(Equal(withoutIsamatch(before.Annotations)), "the node's other annotations are kept")

		qs.mustRun(ctx, qs.lines(qsUninstall, 4, 4))
		Eventually(func() bool {
			return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKey{Name: "isamatch-uninstall"}, &corev1.Namespace{}))
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeTrue(), "namespace isamatch-uninstall is gone")
	})
})

// isamatchKeys are the keys of m under isamatch's prefixes.
func isamatchKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		if isIsamatchKey(k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// withoutIsamatch is m without the keys under isamatch's prefixes.
func withoutIsamatch(m map[string]string) map[string]string {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(k, _ string) bool { return isIsamatchKey(k) })
	return out
}

// isIsamatchKey reports whether a label or annotation key is under one of
// the prefixes the labeler owns.
func isIsamatchKey(k string) bool {
	return strings.HasPrefix(k, isa.NativePrefix) || strings.HasPrefix(k, isa.EmuPrefix)
}

// isamatchLabels are the node's labels under isamatch's prefixes: what the
// labeler owns.
func isamatchLabels(ctx SpecContext, g Gomega) map[string]string {
	var node corev1.Node
	g.Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node)).To(Succeed())
	got := map[string]string{}
	for k, v := range maps.All(node.Labels) {
		if isIsamatchKey(k) {
			got[k] = v
		}
	}
	return got
}

// hostRequest is an ISA request this x86-64 node satisfies: its own
// psABI level ("x86-64-v2" and so on), else the bare architecture.
func hostRequest() string {
	if level := wantLabels[isa.X86LevelLabel]; level != "" && level != "1" {
		return "x86-64-v" + level
	}
	return "x86-64"
}

// createWhenWebhookAnswers creates pod once the webhook has mutated it: a
// pod created while the API server cannot reach the webhook yet would be
// admitted unmutated (failurePolicy Ignore), so such a pod is deleted and
// created again.
func createWhenWebhookAnswers(ctx SpecContext, pod *corev1.Pod) {
	GinkgoHelper()
	template := pod.DeepCopy()
	Eventually(func(g Gomega) {
		p := template.DeepCopy()
		g.Expect(cl.Client.Create(ctx, p)).To(Succeed())
		if _, ok := p.Annotations[isa.DecisionAnnotation]; !ok {
			_ = cl.Client.Delete(ctx, p, client.GracePeriodSeconds(0))
			g.Eventually(func() bool {
				return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKeyFromObject(p), p))
			}).WithTimeout(time.Minute).Should(BeTrue())
			g.Expect(p.Annotations).To(HaveKey(isa.DecisionAnnotation), "the webhook mutated the pod")
		}
		*pod = *p
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}
