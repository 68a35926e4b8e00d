package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
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
	"github.com/isamatch/isamatch/pkg/gate"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/test/node/cluster"
)

// previousRelease is the release the upgrade starts from: no tag exists
// yet, so the commit that was main when releases began. Its images are
// built from a git worktree of it with its own hack/images, and its
// config/ is what `kubectl apply -k` installs first. It had no Helm chart:
// the Helm path installs this tree's chart running its images, which is
// the binary skew a `helm upgrade` goes through (docs/install.md, "Version
// skew").
const previousRelease = "62a8ba960d580a0e24b6b959058a068f8074d917"

// gateBound is how long a gated pod may stay gated while the leader dies:
// the gate's timeout (20s, --gate-timeout), plus the takeover of the
// Lease by another replica (controller-runtime's lease duration 15s and
// retry period 2s), plus 20s for a busy machine.
const gateBound = 20*time.Second + 17*time.Second + 20*time.Second

var _ = Describe("upgrade, rollback and uninstall between releases on a real node", Ordered, func() {
	var (
		work    string
		helmBin string
		// prevConfig is config/ of the previous release.
		prevConfig string
		// prev and cur are each image (labeler, webhook) by digest: the
		// previous release's and this tree's.
		prev, cur map[string]string
		// blackhole is HOST:PORT of a registry that accepts connections and
		// never answers: its images stay unresolved until the gate's
		// deadline.
		blackhole string
	)

	BeforeAll(func(ctx SpecContext) {
		work = GinkgoT().TempDir()
		prevDir := filepath.Join(work, "previous")
		remove, err := cluster.Checkout(ctx, repoRoot, previousRelease, prevDir)
		skipOrFail(err)
		DeferCleanup(remove)
		prevConfig = filepath.Join(prevDir, "config")

		By("building the previous release's labeler and webhook images with its own hack/images (commit " + previousRelease[:7] + ")")
		run(ctx, prevDir, "go", "run", "./hack/images", "--repo", reg.Host+"/isamatch-previous", "--tag", "previous", "--push", "--insecure",
			"--only", "labeler,webhook", "--platforms", "linux/"+runtime.GOARCH)
		prev = pinnedImages(ctx, reg.Host+"/isamatch-previous", "previous")
		cur = pinnedImages(ctx, reg.Host+"/isamatch", imageTag)
		Expect(prev).NotTo(Equal(cur), "the previous release's images differ from this tree's")

		By("building helm from Helm's Go module (go -C charts build)")
		helmBin, err = cluster.BuildHelm(ctx, repoRoot, work)
		Expect(err).NotTo(HaveOccurred())

		l, err := net.Listen("tcp", net.JoinHostPort(host.NodeIP, "0"))
		Expect(err).NotTo(HaveOccurred())
		blackhole = l.Addr().String()
		held := make(chan net.Conn, 64)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				select {
				case held <- c:
				default:
					_ = c.Close()
				}
			}
		}()
		DeferCleanup(func() {
			_ = l.Close()
			close(held)
			for c := range held {
				_ = c.Close()
			}
		})
	}, NodeTimeout(30*time.Minute))

	Context("with Helm", Ordered, func() {
		var before map[string]*corev1.Pod
		values := func(labeler, webhook string) string {
			GinkgoHelper()
			return writeValues(work, labeler, webhook, reg.Host, blackhole)
		}
		chart := func() string { return filepath.Join(repoRoot, "charts", "isamatch") }

		It("installs the previous release's images with the chart", func(ctx SpecContext) {
			GinkgoWriter.Print(helm(ctx, helmBin, "install", "isamatch", chart(), "--namespace", "default",
				"-f", values(prev["labeler"], prev["webhook"]), "--wait=watcher", "--timeout", "10m"))
			waitRollout(ctx, prev["labeler"], prev["webhook"])
			before = admitPods(ctx, "helm-a")
		})

		It("rolls the labeler first: the new labeler keeps the node's labels, beside the previous webhook every decision is the same", func(ctx SpecContext) {
			roll(ctx, "helm-b", before, cur["labeler"], prev["webhook"], func() {
				GinkgoWriter.Print(helm(ctx, helmBin, "upgrade", "isamatch", chart(), "--namespace", "default",
					"-f", values(cur["labeler"], prev["webhook"]), "--wait=watcher", "--timeout", "10m"))
			})
		})

		It("rolls the webhook with no admission failing and no label lost, and decides as the previous one did", func(ctx SpecContext) {
			roll(ctx, "helm-c", before, cur["labeler"], cur["webhook"], func() {
				GinkgoWriter.Print(helm(ctx, helmBin, "upgrade", "isamatch", chart(), "--namespace", "default",
					"-f", values(cur["labeler"], cur["webhook"]), "--wait=watcher", "--timeout", "10m"))
			})
		})

		It("releases every gated pod by its deadline when the gate controller's leader dies mid-way", func(ctx SpecContext) {
			leaderDies(ctx, blackhole)
		})

		It("rolls back to the previous release", func(ctx SpecContext) {
			roll(ctx, "helm-d", before, prev["labeler"], prev["webhook"], func() {
				GinkgoWriter.Print(helm(ctx, helmBin, "rollback", "isamatch", "1", "--namespace", "default", "--wait=watcher", "--timeout", "10m"))
			})
		})

		// Uninstalled from this release: the previous release's uninstall
		// Job removes the labels but releases no gated pod.
		It("rolls forward to this release again", func(ctx SpecContext) {
			roll(ctx, "helm-e", before, cur["labeler"], cur["webhook"], func() {
				GinkgoWriter.Print(helm(ctx, helmBin, "upgrade", "isamatch", chart(), "--namespace", "default",
					"-f", values(cur["labeler"], cur["webhook"]), "--wait=watcher", "--timeout", "10m"))
			})
		})

		It("uninstalls: the node's isamatch labels pruned, no pod left gated", func(ctx SpecContext) {
			gated := gatedWithoutWebhook(ctx, "helm-gated")
			GinkgoWriter.Print(helm(ctx, helmBin, "uninstall", "isamatch", "--namespace", "default", "--wait=watcher", "--timeout", "10m"))
			uninstalled(ctx, gated)
		})
	})

	Context("with kubectl apply -k", Ordered, func() {
		var before map[string]*corev1.Pod
		var prevOverlay string
		overlay := func(name, configDir, labeler, webhook string) string {
			GinkgoHelper()
			return writeKustomization(filepath.Join(work, name), configDir, labeler, webhook, reg.Host, blackhole)
		}

		It("installs the previous release's config/", func(ctx SpecContext) {
			prevOverlay = overlay("kustomize-previous", prevConfig, prev["labeler"], prev["webhook"])
			GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", prevOverlay))
			waitRollout(ctx, prev["labeler"], prev["webhook"])
			before = admitPods(ctx, "kust-a")
		})

		It("rolls the webhook first: this tree's config/ and webhook beside the previous labeler, no admission failing", func(ctx SpecContext) {
			roll(ctx, "kust-b", before, prev["labeler"], cur["webhook"], func() {
				GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", overlay("kustomize-webhook", filepath.Join(repoRoot, "config"), prev["labeler"], cur["webhook"])))
			})
		})

		It("rolls the labeler: the node keeps its labels", func(ctx SpecContext) {
			roll(ctx, "kust-c", before, cur["labeler"], cur["webhook"], func() {
				GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", overlay("kustomize-current", filepath.Join(repoRoot, "config"), cur["labeler"], cur["webhook"])))
			})
		})

		It("rolls back to the previous release's config/", func(ctx SpecContext) {
			roll(ctx, "kust-d", before, prev["labeler"], prev["webhook"], func() {
				GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", prevOverlay))
			})
		})

		It("uninstalls with kubectl delete -k and the uninstall Job: labels pruned, no pod left gated", func(ctx SpecContext) {
			gated := gatedWithoutWebhook(ctx, "kust-gated")
			GinkgoWriter.Print(kubectlRun(ctx, "delete", "-k", prevOverlay, "--wait=true", "--timeout=5m"))
			uninstall := writeUninstallOverlay(ctx)
			GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", uninstall))
			GinkgoWriter.Print(kubectlRun(ctx, "-n", "isamatch-uninstall", "wait", "--for=condition=complete", "job/isamatch-prune", "--timeout=5m"))
			uninstalled(ctx, gated)
			GinkgoWriter.Print(kubectlRun(ctx, "delete", "-k", uninstall, "--wait=true", "--timeout=2m"))
		})
	})
})

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
		bs, as := b.Spec.TopologySpreadConstraints, a.Spec.TopologySpreadConstraints
		if gated(b) != gated(a) {
			for _, p := range []*corev1.Pod{b, a} {
				if gated(p) {
					Expect(p.Spec.TopologySpreadConstraints).To(ConsistOf(HaveField("TopologyKey", neutralSpreadKey)), "gated pod %s", p.Name)
				}
			}
			continue
		}
		Expect(cmp.Diff(bs, as)).To(BeEmpty(), "%s: topology spread constraints of %s (-before +after)", kind, a.Name)
	}
}

// neutralSpreadKey is the topology key of a gated pod's spread constraint:
// one no node carries.
const neutralSpreadKey = isa.GroupDomainPrefix + "none"

// gated reports whether admission gated p (its decision, in either stored
// form, names the gate's outcome).
func gated(p *corev1.Pod) bool {
	c, err := mutate.ParseDecision(p.Annotations)
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

// startProbe starts creating, every second, a pod that requests an ISA no
// node has (so it stays Pending and costs nothing), named prefix-N.
func startProbe(ctx SpecContext, prefix string) *probe {
	p := &probe{prefix: prefix, done: make(chan struct{}), result: make(chan probeResult, 1)}
	go func() {
		defer GinkgoRecover()
		res := probeResult{lost: map[string]bool{}}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
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
			select {
			case <-p.done:
				p.result <- res
				return
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
	Expect(len(res.created)).To(BeNumerically(">", 3), "the probe ran through the roll")
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
		createWhenWebhookAnswers(ctx, pod)
		Expect(pod.Spec.SchedulingGates).To(ContainElement(HaveField("Name", isa.ResolveGate)), "admission gated %s", pod.Name)
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
		g.Expect(gated.Annotations[isa.DecisionAnnotation]).To(HavePrefix(gate.UnresolvedDecision))
		g.Expect(gated.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
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
// pinned (repo@digest), and the webhook told which registries speak plain
// HTTP.
func writeKustomization(dir, configDir, labeler, webhook string, registries ...string) string {
	GinkgoHelper()
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	rel, err := filepath.Rel(dir, configDir)
	Expect(err).NotTo(HaveOccurred())
	var k strings.Builder
	fmt.Fprintf(&k, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\nimages:\n", rel)
	for app, ref := range map[string]string{"labeler": labeler, "webhook": webhook} {
		repo, digest, ok := strings.Cut(ref, "@")
		Expect(ok).To(BeTrue(), "image %q has no digest", ref)
		fmt.Fprintf(&k, "  - name: ghcr.io/isamatch/%s\n    newName: %s\n    digest: %s\n", app, repo, digest)
	}
	k.WriteString("patches:\n  - target:\n      kind: Deployment\n      name: isamatch-webhook\n    patch: |-\n")
	for _, r := range registries {
		fmt.Fprintf(&k, "      - op: add\n        path: /spec/template/spec/containers/0/args/-\n        value: --insecure-registry=%s\n", r)
	}
	Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k.String()), 0o644)).To(Succeed())
	GinkgoWriter.Printf("overlay %s:\n%s", dir, k.String())
	return dir
}
