package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/gate/unresolved"
	"github.com/isamatch/isamatch/pkg/isa"
)

// probe creates a pod every second while a release rolls, and watches the
// node's labels.
type probe struct {
	prefix string
	done   chan struct{}
	result chan probeResult
}

type probeResult struct {
	created []string
	// createErrs are pods the API server refused (a failed admission).
	createErrs []string
	// lost are the node's isamatch labels seen missing during the roll.
	lost map[string]bool
}

// minProbes is how many pods a probe creates at least: a roll that
// finishes within a second or two still has pods admitted before, during
// and after it.
const minProbes = 4

// startProbe starts creating, every second, a pod that requests an ISA no
// node has (so it stays Pending and costs nothing), named prefix-N, until
// it is stopped and has made minProbes attempts.
func startProbe(ctx SpecContext, prefix string) *probe {
	p := &probe{prefix: prefix, done: make(chan struct{}), result: make(chan probeResult, 1)}
	go func() {
		defer GinkgoRecover()
		res := probeResult{lost: map[string]bool{}}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		done := p.done
		for i := 0; ; i++ {
			pod := testbed.MakePod(fmt.Sprintf("%s-%d", prefix, i), podNamespace).Image(pauseImage).Annotation(isa.RequestAnnotation, "rv64gcv").Obj()
			if err := cl.Client.Create(ctx, pod); err != nil {
				res.createErrs = append(res.createErrs, pod.Name+": "+err.Error())
			} else {
				res.created = append(res.created, pod.Name)
			}
			var node corev1.Node
			if err := cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node); err == nil {
				for k := range wantLabels {
					if _, ok := node.Labels[k]; !ok {
						res.lost[k] = true
					}
				}
			}
			if done == nil && i+1 >= minProbes {
				p.result <- res
				return
			}
			select {
			case <-done:
				if i+1 >= minProbes {
					p.result <- res
					return
				}
				done = nil // stopped: go on to minProbes attempts
			case <-ctx.Done():
				p.result <- res
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// stop ends the probe and checks it: every pod created during the roll was
// admitted by a webhook (it has a decision: with failurePolicy Ignore, an
// admission that failed would leave none), is released from the gate, and
// no label left the node. Then it deletes the probe's pods.
func (p *probe) stop(ctx SpecContext) {
	GinkgoHelper()
	close(p.done)
	res := <-p.result
	GinkgoWriter.Printf("probe %s: %d pods created during the roll\n", p.prefix, len(res.created))
	Expect(res.createErrs).To(BeEmpty(), "pods refused during the roll")
	Expect(res.lost).To(BeEmpty(), "node labels missing during the roll")
	Expect(len(res.created)).To(BeNumerically(">=", minProbes), "the probe ran through the roll")
	var undecided []string
	for _, name := range res.created {
		var pod corev1.Pod
		Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: podNamespace, Name: name}, &pod)).To(Succeed())
		if _, ok := pod.Annotations[isa.DecisionAnnotation]; !ok {
			undecided = append(undecided, name+" (created "+pod.CreationTimestamp.Format(time.RFC3339)+")")
		}
	}
	Expect(undecided).To(BeEmpty(), "pods admitted without the webhook during the roll")
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(podNamespace))).To(Succeed())
		for _, pod := range pods.Items {
			g.Expect(pod.Spec.SchedulingGates).To(BeEmpty(), "pod %s still gated", pod.Name)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	for _, name := range res.created {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: podNamespace, Name: name}}
		Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
	}
}

// leaderDies gates pods whose images no registry answers for, kills the
// elected webhook replica (no graceful stop: the Lease is not given up)
// while they wait, and checks that every one is released within gateBound
// of its creation by the replica that takes the Lease over.
func leaderDies(ctx SpecContext, blackhole string) {
	GinkgoHelper()
	var pods []*corev1.Pod
	for i := range 6 {
		pod := testbed.MakePod(fmt.Sprintf("leader-dies-%d", i), podNamespace).Image(fmt.Sprintf("%s/never/answers-%d:1", blackhole, i)).Obj()
		createGated(ctx, pod)
		pods = append(pods, pod)
	}
	var lease coordinationv1.Lease
	Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &lease)).To(Succeed())
	Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	leader, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	By("killing the leader " + leader + " while the pods wait for their images")
	Expect(cl.Client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: leader}}, client.GracePeriodSeconds(0))).To(Succeed())
	released := map[string]time.Duration{}
	Eventually(func(g Gomega) {
		for _, pod := range pods {
			if _, ok := released[pod.Name]; ok {
				continue
			}
			var p corev1.Pod
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), &p)).To(Succeed())
			if len(p.Spec.SchedulingGates) == 0 {
				released[pod.Name] = time.Since(p.CreationTimestamp.Time)
			}
		}
		g.Expect(released).To(HaveLen(len(pods)))
	}).WithContext(ctx).WithTimeout(2 * gateBound).WithPolling(250 * time.Millisecond).Should(Succeed())
	GinkgoWriter.Printf("released after the leader died, seconds since creation (bound %s): %v\n", gateBound, released)
	for name, d := range released {
		Expect(d).To(BeNumerically("<=", gateBound), "%s released %s after its creation", name, d)
	}
	var newLease coordinationv1.Lease
	Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &newLease)).To(Succeed())
	Expect(*newLease.Spec.HolderIdentity).NotTo(HavePrefix(leader+"_"), "another replica holds the Lease")
	for _, pod := range pods {
		Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
	}
	waitDeploymentReady(ctx)
}

// createGated creates pod until admission gates it. A replica gates a pod
// only while it sees a gate controller hold the Lease (gate.LeaseWatch
// reads it every 2 s); after a roll the old leader gives the Lease up
// before a new replica takes it, and a pod admitted in that moment is
// resolved at admission instead, as documented. Such a pod is deleted and
// created again.
func createGated(ctx SpecContext, pod *corev1.Pod) {
	GinkgoHelper()
	template := pod.DeepCopy()
	Eventually(func(g Gomega) {
		p := template.DeepCopy()
		createWhenWebhookAnswers(ctx, p)
		if !slices.ContainsFunc(p.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool { return sg.Name == isa.ResolveGate }) {
			g.Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue())
			g.Expect(p.Spec.SchedulingGates).To(ContainElement(HaveField("Name", isa.ResolveGate)), "admission gated %s (decision: %s)", p.Name, p.Annotations[isa.DecisionAnnotation])
		}
		*pod = *p
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
}

// waitDeploymentReady waits until every webhook replica is ready again.
func waitDeploymentReady(ctx SpecContext) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas))
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// gatedWithoutWebhook stops the webhook (zero replicas: no gate
// controller) and creates a pod that carries isamatch's gate, as one
// admitted just before: nothing of isamatch's is left to release it but
// the uninstall.
func gatedWithoutWebhook(ctx SpecContext, name string) *corev1.Pod {
	GinkgoHelper()
	GinkgoWriter.Print(kubectlRun(ctx, "-n", namespace, "scale", "deployment/"+webhookName, "--replicas=0"))
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(namespace))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	pod := testbed.MakePod(name, podNamespace).Image(pauseImage).Obj()
	pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
	Expect(cl.Client.Create(ctx, pod)).To(Succeed())
	return pod
}

// uninstalled: isamatch's namespaces are gone, the node has none of its
// labels and keeps all others, the gated pod is released and runs, and
// every pod the specs made is deleted.
func uninstalled(ctx SpecContext, gated *corev1.Pod) {
	GinkgoHelper()
	for _, ns := range []string{namespace, labelerNamespace} {
		Eventually(func() bool {
			return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))
		}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(BeTrue(), "namespace %s is gone", ns)
	}
	var node corev1.Node
	Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node)).To(Succeed())
	Expect(isamatchKeys(node.Labels)).To(BeEmpty(), "labels left")
	Expect(isamatchKeys(node.Annotations)).To(BeEmpty(), "annotations left")
	Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelHostname, cl.NodeName), "the node's own labels are kept")
	Eventually(func(g Gomega) {
		g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(gated), gated)).To(Succeed())
		g.Expect(gated.Spec.SchedulingGates).To(BeEmpty())
		g.Expect(gated.Annotations[isa.DecisionAnnotation]).To(HavePrefix(unresolved.Decision))
		g.Expect(gated.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	removePods(ctx)
}

// removePods deletes the pods of podNamespace and waits until they are gone.
func removePods(ctx SpecContext) {
	GinkgoHelper()
	Expect(cl.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(podNamespace), client.GracePeriodSeconds(0))).To(Succeed())
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(podNamespace))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

// headDigest is the digest ref (REGISTRY/REPO:TAG, plain HTTP) points at.
func headDigest(ctx context.Context, ref string) string {
	GinkgoHelper()
	tag, err := name.ParseReference(ref, name.Insecure)
	Expect(err).NotTo(HaveOccurred())
	desc, err := remote.Head(tag, remote.WithContext(ctx))
	Expect(err).NotTo(HaveOccurred(), "resolve %s", tag)
	return desc.Digest.String()
}

// writeKustomization writes, in dir, the overlay a user writes
// (config/README.md, step 2): configDir with the labeler and webhook images
// pinned (repo@digest; "" keeps configDir's, a release's dist/config pins
// them already), and the webhook told which registries speak plain HTTP.
// Both releases' webhooks read that from a drop-in of their configuration
// ConfigMap.
func writeKustomization(dir, configDir, labeler, webhook string, registries ...string) string {
	GinkgoHelper()
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	rel, err := filepath.Rel(dir, configDir)
	Expect(err).NotTo(HaveOccurred())
	var k strings.Builder
	fmt.Fprintf(&k, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n", rel)
	if labeler != "" {
		k.WriteString("images:\n")
	}
	for app, ref := range map[string]string{"labeler": labeler, "webhook": webhook} {
		if ref == "" {
			continue
		}
		repo, digest, ok := strings.Cut(ref, "@")
		Expect(ok).To(BeTrue(), "image %q has no digest", ref)
		fmt.Fprintf(&k, "  - name: ghcr.io/isamatch/%s\n    newName: %s\n    digest: %s\n", app, repo, digest)
	}
	quoted := make([]string, len(registries))
	for i, r := range registries {
		quoted[i] = strconv.Quote(r)
	}
	k.WriteString(webhookDropIn(dir, "90-site.yaml", "registry:\n  insecureRegistries: ["+strings.Join(quoted, ", ")+"]\n"))
	Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k.String()), 0o644)).To(Succeed())
	GinkgoWriter.Printf("overlay %s:\n%s", dir, k.String())
	return dir
}

// webhookDropIn writes name in dir, a drop-in WebhookConfiguration with
// fields (YAML), and returns the kustomization lines that add it to the
// webhook's drop-in ConfigMap, as docs/configuration.md tells a user to:
// the ConfigMap's name changes with it, and the Deployment rolls.
func webhookDropIn(dir, name, fields string) string {
	GinkgoHelper()
	body := "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n" + fields
	Expect(os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)).To(Succeed())
	GinkgoWriter.Printf("%s:\n%s", filepath.Join(dir, name), body)
	return "configMapGenerator:\n  - name: isamatch-webhook-config-d\n    namespace: isamatch-system\n    behavior: merge\n    files: [" + name + "]\n"
}
