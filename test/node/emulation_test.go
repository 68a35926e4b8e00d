package node

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/hack/probes"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/test/node/cluster"
)

// The QEMU emulation a user sets up on an x86 node (Debian's
// qemu-user-static, its riscv64 binfmt_misc handler), then isamatch on it:
// the labeler probes what the handler runs, the webhook sets the QEMU_CPU
// the node records in a pod it routes to emulation, and that pod's vector
// program runs. The host's binfmt_misc state is restored afterwards.
var _ = Describe("QEMU emulation on a real node", Ordered, func() {
	var (
		qemuCPU      string // the node's recorded QEMU_CPU for riscv64
		vectorImage  string // riscv64 only: hack/probes' riscv64/v, which exits 0 only when V ran and added right
		labelerRISCV string // the labeler image, linux/riscv64 only
	)

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		By("building the riscv64 vector program and pushing it as a riscv64-only image")
		Expect(probes.Build(ctx, dir, "riscv64")).To(Succeed())
		vectorImage = reg.Host + "/isamatch-test/vector:" + imageTag
		Expect(cluster.PushProgram(ctx, filepath.Join(dir, "riscv64", "v"), "riscv64", vectorImage)).To(Succeed())

		By("make images: the labeler for linux/riscv64 only")
		run(ctx, repoRoot, "go", "run", "./hack/images", "--repo", reg.Host+"/isamatch-riscv64", "--tag", imageTag, "--push", "--insecure",
			"--only", "labeler", "--platforms", "linux/riscv64")
		// containerd pulls, of an image index, only the node's platform:
		// the shipped image is referenced by its manifest's digest, as a
		// user runs a foreign-architecture image on an emulating node.
		labelerRISCV = platformManifest(ctx, reg.Host+"/isamatch-riscv64/labeler:"+imageTag, "riscv64")

		By("registering Debian's qemu-riscv64 binfmt_misc handler (flags OPF)")
		b, err := cluster.RegisterBinfmt("qemu-riscv64")
		skipOrFail(err)
		DeferCleanup(func() { Expect(b.Restore()).To(Succeed(), "restore the host's binfmt_misc") })

		GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", overlay))
		DeferCleanup(func(ctx SpecContext) {
			for _, name := range []string{"vector", "vector-off", "vector-zext", "labeler-riscv64"} {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: podNamespace, Name: name}}
				Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
			}
			tearDown(ctx, overlay, namespace, labelerNamespace)
		}, NodeTimeout(5*time.Minute))
		waitWebhookReady(ctx)
	}, NodeTimeout(15*time.Minute))

	It("labels the node with what the probes ran: no V with the default CPU, V under the recorded QEMU_CPU", func(ctx SpecContext) {
		var node corev1.Node
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node)).To(Succeed())
			g.Expect(node.Labels).To(HaveKeyWithValue(isa.EmuPrefix+"riscv64", "true"))
			g.Expect(node.Annotations).To(HaveKey(isa.QEMUCPUAnnotation(isa.RISCV64)))
		}).WithContext(ctx).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(), func() string {
			return "node annotations: " + node.Annotations[isa.EmuSourceAnnotation]
		})
		GinkgoWriter.Printf("qemu source: %s\n", node.Annotations[isa.EmuSourceAnnotation])
		Expect(node.Labels).To(HaveKeyWithValue(isa.EmuPrefix+"rv.v", "true"), "V runs under the recorded QEMU_CPU")
		def, err := isa.Parse(node.Annotations[isa.EmuDefaultISAAnnotation])
		Expect(err).NotTo(HaveOccurred())
		v, err := isa.Parse("rv64gcv")
		Expect(err).NotTo(HaveOccurred())
		Expect(isa.Satisfies(def, v)).To(BeFalse(), "Debian's QEMU runs no V with its default CPU, and the labeler says so: %s", def.Short())
		qemuCPU = node.Annotations[isa.QEMUCPUAnnotation(isa.RISCV64)]
		Expect(qemuCPU).To(ContainSubstring("v=true"))
	})

	It("labels the node like labeler --print on the host with the handler registered, emulation included", func(ctx SpecContext) {
		want := hostLabels(ctx, GinkgoT().TempDir(), host.NodeName)
		Expect(want).To(HaveKeyWithValue(isa.EmuPrefix+"riscv64", "true"), "labeler --print on the host probes the handler with the image's programs")
		Eventually(func(g Gomega) {
			g.Expect(isamatchLabels(ctx, g)).To(Equal(want))
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string {
			return cmp.Diff(want, isamatchLabels(ctx, Default)) + " (-labeler --print +node labels)"
		})
	})

	It("runs an isa.qemu rv64gcv pod of a riscv64-only vector program on this x86 node, with the QEMU_CPU the webhook set", func(ctx SpecContext) {
		pod := vectorPod("vector", "rv64gcv", vectorImage)
		createWhenWebhookAnswers(ctx, pod)
		Expect(containerEnv(pod, isa.QEMUCPUEnv)).To(Equal(qemuCPU), "the webhook set the node's QEMU_CPU")
		Expect(emulatorOf(pod).QEMUCPU).To(Equal(qemuCPU), "the decision names the setting: %s", pod.Annotations[isa.DecisionAnnotation])
		Expect(exitCode(ctx, pod)).To(Equal(int32(0)), "the vector program ran and computed the right sum")
		Expect(pod.Spec.NodeName).To(Equal(cl.NodeName))
	})

	It("keeps a pod Pending that asks the emulator for an extension it cannot run, and the decision says so", func(ctx SpecContext) {
		var node corev1.Node
		Expect(cl.Client.Get(ctx, client.ObjectKey{Name: cl.NodeName}, &node)).To(Succeed())
		// An extension a probe program tests and this QEMU did not run
		// under any QEMU_CPU (Debian 12's QEMU 7.2: Zicond, Zfa, Zvbb, ...).
		var ext string
		for _, p := range probes.Programs() {
			if p.Arch == "riscv64" && p.Name != "base" && node.Labels[isa.EmuPrefix+"rv."+p.Name] == "" {
				ext = p.Name
				break
			}
		}
		if ext == "" {
			Skip("this QEMU runs every extension a probe program tests")
		}
		request := "rv64gcv_" + ext
		pod := vectorPod("vector-zext", request, vectorImage)
		createWhenWebhookAnswers(ctx, pod)
		counts, err := contract.ParseDecision(pod.Annotations)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts.NoNode).To(BeTrue(), "no node satisfies %s: %s", request, pod.Annotations[isa.DecisionAnnotation])
		Expect(counts.Emulator).NotTo(BeNil())
		Expect(counts.Emulator.Reason).To(Equal(engine.EmulatorNoNode))
		Expect(counts.Emulator.Best).NotTo(BeEmpty(), "the decision says what emulation runs at most")
		Eventually(func(g Gomega) {
			note, err := testbed.DecisionNote(ctx, cl.Client, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(note).To(ContainSubstring("no node emulates the request"), "the pod's IsamatchDecided Event")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodScheduled), HaveField("Status", corev1.ConditionFalse),
				HaveField("Reason", corev1.PodReasonUnschedulable))))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("%s: %s\n", request, pod.Annotations[isa.DecisionAnnotation])
	})

	It("starts the riscv64 labeler image under emulation, which prints its --print output", func(ctx SpecContext) {
		pod := testbed.MakePod("labeler-riscv64", podNamespace).Image(labelerRISCV).Annotation(isa.QEMUAnnotation, "riscv64").Obj()
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		// The container's own / is the host here (the default hostRoot is
		// the DaemonSet's mount, /host): a configuration file says so.
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: podNamespace, Name: "labeler-riscv64"},
			Data:       map[string]string{"config.yaml": "apiVersion: config.isamatch.io/v1alpha1\nkind: LabelerConfiguration\nhostRoot: /\n"},
		}
		Expect(cl.Client.Create(ctx, cm)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, cm))).To(Succeed()) })
		pod.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/labeler", ReadOnly: true}}
		pod.Spec.Containers[0].Args = []string{"--print", "--config=/etc/labeler/config.yaml"}
		createWhenWebhookAnswers(ctx, pod)
		Expect(exitCode(ctx, pod)).To(Equal(int32(0)))
		out := kubectlRun(ctx, "-n", podNamespace, "logs", pod.Name)
		GinkgoWriter.Printf("labeler --print under qemu-riscv64:\n%s", out)
		Expect(out).To(ContainSubstring(isa.ArchLabel + "="))
	})

	It("lets the same vector pod fail with SIGILL (exit 132) once the webhook's injection is off", func(ctx SpecContext) {
		GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", writeWebhookOverlay("qemu-cpu-off", "92-qemu-cpu.yaml", "admission:\n  qemuCPU: \"off\"\n")))
		waitWebhookReady(ctx)

		pod := vectorPod("vector-off", "rv64gcv", vectorImage)
		// A replica of the old generation may still answer for a moment:
		// create the pod until the decision is the new one's.
		Eventually(func(g Gomega) {
			p := pod.DeepCopy()
			createWhenWebhookAnswers(ctx, p)
			if e := emulatorOf(p); e == nil || e.Reason != engine.EmulatorOff {
				_ = cl.Client.Delete(ctx, p, client.GracePeriodSeconds(0))
				g.Eventually(func() bool {
					return apierrors.IsNotFound(cl.Client.Get(ctx, client.ObjectKeyFromObject(p), p))
				}).WithTimeout(time.Minute).Should(BeTrue())
				g.Expect(e).To(HaveField("Reason", engine.EmulatorOff))
			}
			*pod = *p
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(containerEnv(pod, isa.QEMUCPUEnv)).To(BeEmpty())
		Expect(exitCode(ctx, pod)).To(Equal(int32(132)), "the default CPU has no V: SIGILL")
	})
})

// platformManifest is ref's image for linux/arch, by digest.
func platformManifest(ctx SpecContext, ref, arch string) string {
	GinkgoHelper()
	tag, err := name.ParseReference(ref, name.Insecure)
	Expect(err).NotTo(HaveOccurred())
	idx, err := remote.Index(tag, remote.WithContext(ctx))
	Expect(err).NotTo(HaveOccurred(), "read the index %s", ref)
	m, err := idx.IndexManifest()
	Expect(err).NotTo(HaveOccurred())
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			return tag.Context().Digest(d.Digest.String()).String()
		}
	}
	Fail("no linux/" + arch + " image in " + ref)
	return ""
}

// vectorPod is a pod of the riscv64 vector image that emulates qemu and
// runs once. Its program is not PID 1 of a PID namespace: QEMU passes a
// guest's fatal signal on by sending it to itself, which PID 1 ignores, so
// an emulated PID 1 killed by SIGILL would hang instead of exiting 132.
func vectorPod(name, qemu, image string) *corev1.Pod {
	pod := testbed.MakePod(name, podNamespace).Image(image).Annotation(isa.QEMUAnnotation, qemu).Obj()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	share := true
	pod.Spec.ShareProcessNamespace = &share
	return pod
}

// waitWebhookReady waits until every replica of the webhook Deployment is
// of its latest generation and ready.
func waitWebhookReady(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: webhookName}, &d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.ReadyReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas), "old replicas gone")
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// exitCode waits until pod's only container has terminated and returns
// its exit code.
func exitCode(ctx SpecContext, pod *corev1.Pod) int32 {
	GinkgoHelper()
	var code int32
	Eventually(func(g Gomega) {
		g.Expect(cl.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		t := pod.Status.ContainerStatuses[0].State.Terminated
		g.Expect(t).NotTo(BeNil(), "container terminated; phase %s", pod.Status.Phase)
		code = t.ExitCode
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return code
}

// containerEnv is the value of the variable name in pod's first container.
func containerEnv(pod *corev1.Pod, name string) string {
	i := slices.IndexFunc(pod.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return ""
	}
	return pod.Spec.Containers[0].Env[i].Value
}

// emulatorOf is the emulator setting of pod's decision.
func emulatorOf(pod *corev1.Pod) *contract.EmulatorSetting {
	counts, err := contract.ParseDecision(pod.Annotations)
	if err != nil {
		return nil
	}
	return counts.Emulator
}
