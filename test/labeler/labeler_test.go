package labeler

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

const (
	n = isa.NativePrefix
	q = isa.EmuPrefix
)

func mergePatch(s string) client.Patch { return client.RawPatch(types.MergePatchType, []byte(s)) }

func getNode(ctx SpecContext, name string) *corev1.Node {
	GinkgoHelper()
	node := &corev1.Node{}
	Expect(cp.Client.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	return node
}

var _ = Describe("labeler --once", func() {
	It("labels a Node from a fixture, keeping foreign labels, and explains the decision", func(ctx SpecContext) {
		node := testbed.MakeNode("vf2").Arch("riscv64").Label("team", "a").Annotation("note", "keep").Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())

		code, out := runOnce(ctx, "vf2", fixture("visionfive2"))
		Expect(code).To(Equal(0), out)

		got := getNode(ctx, "vf2")
		Expect(got.Labels).To(HaveKeyWithValue(n+"arch", "riscv64"))
		Expect(got.Labels).To(HaveKeyWithValue(n+"rv.zba", "true"))
		Expect(got.Labels).To(HaveKeyWithValue(n+"rv.c", "true"))
		Expect(got.Labels).NotTo(HaveKey(n + "rv.v"))
		Expect(got.Labels).To(HaveKeyWithValue("team", "a"))
		Expect(got.Labels).To(HaveKeyWithValue(isa.KubeArchLabel, "riscv64"))
		Expect(got.Labels).To(HaveKeyWithValue("kubernetes.io/hostname", "vf2"))
		Expect(got.Annotations).To(HaveKeyWithValue("note", "keep"))
		Expect(got.Annotations).To(HaveKeyWithValue(n+"source", ContainSubstring("decided by cpuinfo (isa of 4 harts)")))
		Expect(got.Annotations).To(HaveKeyWithValue(n+"isa", HavePrefix("rv64imafdc")))
		Expect(got.Annotations).NotTo(HaveKey(q + "isa"))
	})

	It("updates and removes labels when the host changes, and a second pass writes nothing", func(ctx SpecContext) {
		node := testbed.MakeNode("switch").Arch("riscv64").Label("team", "b").Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())

		steps := []struct {
			machine string
			has     map[string]string
			hasNot  []string
		}{
			{machine: "spacemit-k1", has: map[string]string{n + "rv.v": "true", n + "rv.zve64d": "true", n + "rv.zba": "true"}},
			{machine: "lichee-pi-4a", has: map[string]string{n + "rv.xtheadvector": "true"}, hasNot: []string{n + "rv.v", n + "rv.zve64d", n + "rv.zba"}},
			{machine: "paper-node1", has: map[string]string{n + "arch": "amd64", n + "x86-64-level": "3", q + "riscv64": "true", q + "rv.v": "true"},
				hasNot: []string{n + "rv.xtheadvector", n + "rv.c"}},
			{machine: "visionfive2-old-kernel", has: map[string]string{n + "arch": "riscv64", n + "rv.c": "true"},
				hasNot: []string{q + "riscv64", q + "rv.v", n + "x86-64-level", n + "rv.zba"}},
		}
		for _, s := range steps {
			By("probing " + s.machine)
			code, out := runOnce(ctx, "switch", fixture(s.machine))
			Expect(code).To(Equal(0), out)
			got := getNode(ctx, "switch")
			for k, v := range s.has {
				Expect(got.Labels).To(HaveKeyWithValue(k, v), "after %s", s.machine)
			}
			for _, k := range s.hasNot {
				Expect(got.Labels).NotTo(HaveKey(k), "after %s", s.machine)
			}
			Expect(got.Labels).To(HaveKeyWithValue("team", "b"))
			if _, ok := s.has[q+"riscv64"]; ok {
				Expect(got.Annotations).To(HaveKeyWithValue(q+"source", ContainSubstring("--with-arch=rv64imfdv")))
			} else {
				Expect(got.Annotations).NotTo(HaveKey(q + "source"))
			}

			By("running again on the same host: no write at all")
			before := got.ResourceVersion
			code, out = runOnce(ctx, "switch", fixture(s.machine))
			Expect(code).To(Equal(0), out)
			Expect(out).To(ContainSubstring("patched=false"))
			Expect(getNode(ctx, "switch").ResourceVersion).To(Equal(before), "second pass changed the node")
		}
	})

	It("fails clearly when the node does not exist or the probe fails", func(ctx SpecContext) {
		code, out := runOnce(ctx, "no-such-node", fixture("visionfive2"))
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring(`node "no-such-node" does not exist`))

		node := testbed.MakeNode("broken-host").Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
		code, out = runOnce(ctx, "broken-host", filepath.Join(workDir, "empty-host-root"))
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("read /proc/cpuinfo of the host root"))
		Expect(owned(getNode(ctx, "broken-host").Labels)).To(BeEmpty())
	})
})

var _ = Describe("ValidatingAdmissionPolicy isamatch-labeler", func() {
	BeforeEach(func(ctx SpecContext) {
		for _, name := range []string{"vap-a", "vap-b"} {
			node := testbed.MakeNode(name).Obj()
			err := testbed.CreateReadyNode(ctx, cp.Client, node)
			if !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
	})

	DescribeTable("as the labeler's ServiceAccount on node vap-a",
		func(ctx SpecContext, tokenNode, target, patch, wantErr string) {
			err := saClient(tokenNode).Patch(ctx, getNode(ctx, target), mergePatch(patch))
			if wantErr == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
			Expect(err.Error()).To(ContainSubstring(wantErr))
		},
		Entry("accepts its own node's isa labels and annotations", "vap-a", "vap-a",
			`{"metadata":{"labels":{"`+isa.ArchLabel+`":"amd64","`+q+`riscv64":"true"},"annotations":{"`+isa.NativeSourceAnnotation+`":"test"}}}`, ""),
		Entry("accepts removing its own isa label", "vap-a", "vap-a",
			`{"metadata":{"labels":{"`+q+`riscv64":null}}}`, ""),
		Entry("rejects a patch of another node", "vap-a", "vap-b",
			`{"metadata":{"labels":{"`+isa.ArchLabel+`":"amd64"}}}`, "the isamatch labeler on node vap-a may not change node vap-b"),
		Entry("rejects a kubernetes.io/ label", "vap-a", "vap-a",
			`{"metadata":{"labels":{"`+isa.KubeArchLabel+`":"arm64"}}}`, "may only change labels under "+n+" and "+q+", not "+isa.KubeArchLabel),
		Entry("rejects removing a foreign label", "vap-a", "vap-a",
			`{"metadata":{"labels":{"kubernetes.io/hostname":null}}}`, "not kubernetes.io/hostname"),
		Entry("rejects a foreign annotation", "vap-a", "vap-a",
			`{"metadata":{"annotations":{"node.alpha.kubernetes.io/ttl":"5"}}}`, "may only change annotations under "+n+" and "+q+", not node.alpha.kubernetes.io/ttl"),
		Entry("rejects a spec change (cordon)", "vap-a", "vap-a",
			`{"spec":{"unschedulable":true}}`, "not its spec, status, finalizers or owner references"),
		Entry("rejects a token without the node-name extra", "", "vap-a",
			`{"metadata":{"labels":{"`+isa.ArchLabel+`":"amd64"}}}`, "its token names no node"),
	)

	// The specs above impersonate the node-name extra; this one gets it the
	// way the DaemonSet's pods do, from a token bound to a pod on the node
	// (ServiceAccountTokenPodNodeInfo, on by default from Kubernetes 1.30).
	It("gets the node-name extra from a pod-bound token of its ServiceAccount", func(ctx SpecContext) {
		pod := testbed.MakePod("labeler-token", namespace).Obj()
		pod.Spec.NodeName = "vap-a"
		pod.Spec.ServiceAccountName = serviceAccount
		Expect(cp.Client.Create(ctx, pod)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(cp.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
		})
		cs, err := kubernetes.NewForConfig(cp.Config)
		Expect(err).NotTo(HaveOccurred())
		tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{
				ExpirationSeconds: ptr.To[int64](600),
				BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		cfg := rest.AnonymousClientConfig(cp.Config)
		cfg.BearerToken = tr.Status.Token
		c, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		Expect(err).NotTo(HaveOccurred())

		Expect(c.Patch(ctx, getNode(ctx, "vap-a"), mergePatch(`{"metadata":{"labels":{"`+q+`riscv64":"true"}}}`))).To(Succeed())
		err = c.Patch(ctx, getNode(ctx, "vap-b"), mergePatch(`{"metadata":{"labels":{"`+q+`riscv64":"true"}}}`))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patch another node: %v", err)
		Expect(err.Error()).To(ContainSubstring("the isamatch labeler on node vap-a may not change node vap-b"))
	})

	It("leaves other identities alone and RBAC still limits the labeler", func(ctx SpecContext) {
		Expect(cp.Client.Patch(ctx, getNode(ctx, "vap-b"), mergePatch(`{"metadata":{"labels":{"`+isa.KubeArchLabel+`":"arm64"}}}`))).To(Succeed())

		err := saClient("vap-a").Delete(ctx, getNode(ctx, "vap-a"))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "delete node: %v", err)
		Expect(err.Error()).To(ContainSubstring("cannot delete resource"))

		err = saClient("vap-a").List(ctx, &corev1.PodList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "list pods: %v", err)
	})
})

var _ = Describe("ValidatingAdmissionPolicy isamatch-node-labels", func() {
	BeforeEach(func(ctx SpecContext) {
		for _, name := range []string{"kl-a", "kl-b"} {
			err := testbed.CreateReadyNode(ctx, cp.Client, testbed.MakeNode(name).Label(isa.NativePrefix+"rv.c", "true").Obj())
			if !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
	})

	forbidden := func(err error, want string) {
		GinkgoHelper()
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
		Expect(err.Error()).To(ContainSubstring(want))
	}

	DescribeTable("as the kubelet of node kl-a (system:node:kl-a, group system:nodes)",
		func(ctx SpecContext, patch, wantErr string) {
			err := nodeClient("kl-a").Patch(ctx, getNode(ctx, "kl-a"), mergePatch(patch))
			if wantErr == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			forbidden(err, wantErr)
		},
		Entry("may still set its own other labels", `{"metadata":{"labels":{"team":"kl"}}}`, ""),
		Entry("may not add an isa label", `{"metadata":{"labels":{"`+isa.NativePrefix+`rv.v":"true"}}}`,
			"only the isamatch labeler (ServiceAccount isamatch-labeler) may set node labels under "+n+" and "+q+"; system:node:kl-a may not change "+isa.NativePrefix+"rv.v on node kl-a"),
		Entry("may not add a qemu label", `{"metadata":{"labels":{"`+isa.EmuPrefix+`arch.riscv64":"true"}}}`, "may not change "+isa.EmuPrefix+"arch.riscv64"),
		Entry("may not change an isa label", `{"metadata":{"labels":{"`+isa.NativePrefix+`rv.c":"false"}}}`, "may not change "+isa.NativePrefix+"rv.c"),
		Entry("may not remove an isa label", `{"metadata":{"labels":{"`+isa.NativePrefix+`rv.c":null}}}`, "may not change "+isa.NativePrefix+"rv.c"),
		Entry("may not set an isa annotation", `{"metadata":{"annotations":{"`+isa.NativePrefix+`source":"trust me"}}}`,
			"may set node annotations under "+n+" and "+q+"; system:node:kl-a may not change "+isa.NativePrefix+"source"),
	)

	It("keeps a kubelet from registering with isa labels, and off other nodes", func(ctx SpecContext) {
		err := nodeClient("kl-new").Create(ctx, testbed.MakeNode("kl-new").Label(isa.NativePrefix+"rv.v", "true").Obj())
		forbidden(err, "may not change "+isa.NativePrefix+"rv.v on node kl-new")
		Expect(nodeClient("kl-new").Create(ctx, testbed.MakeNode("kl-new").Obj())).To(Succeed())

		// Another node: NodeRestriction (or RBAC) refuses before the policy.
		err = nodeClient("kl-a").Patch(ctx, getNode(ctx, "kl-b"), mergePatch(`{"metadata":{"labels":{"team":"x"}}}`))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patch another node: %v", err)
	})

	It("lets the labeler's ServiceAccount and a cluster admin write isa labels", func(ctx SpecContext) {
		Expect(saClient("kl-a").Patch(ctx, getNode(ctx, "kl-a"), mergePatch(`{"metadata":{"labels":{"`+isa.NativePrefix+`rv.v":"true"}}}`))).To(Succeed())
		Expect(getNode(ctx, "kl-a").Labels).To(HaveKeyWithValue(isa.NativePrefix+"rv.v", "true"))
		Expect(cp.Client.Patch(ctx, getNode(ctx, "kl-b"), mergePatch(`{"metadata":{"labels":{"`+isa.NativePrefix+`rv.v":"true"}}}`))).To(Succeed())
		Expect(getNode(ctx, "kl-b").Labels).To(HaveKeyWithValue(isa.NativePrefix+"rv.v", "true"))
	})
})

var _ = Describe("labeler daemon", func() {
	It("labels its node, puts back a removed label, and stays small", func(ctx SpecContext) {
		node := testbed.MakeNode("daemon-node").Arch("riscv64").Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, node)).To(Succeed())
		other := testbed.MakeNode("daemon-other").Arch("riscv64").Obj()
		Expect(testbed.CreateReadyNode(ctx, cp.Client, other)).To(Succeed())

		var (
			daemon      *testbed.Process
			metricsPort int
		)
		err := testbed.StartOnFreePorts(2, func(ports []int) error {
			config, err := configfile.Labeler(workDir, func(c *v1alpha1.LabelerConfiguration) {
				c.HostRoot, c.Commands.Exec, c.HWProbe = fixture("spacemit-k1"), v1alpha1.ExecDirect, false
				c.Interval = metav1.Duration{Duration: time.Hour}
				c.Metrics.BindAddress = fmt.Sprintf("127.0.0.1:%d", ports[0])
				c.Health.BindAddress = fmt.Sprintf("127.0.0.1:%d", ports[1])
				c.Metrics.Secure = false
			})
			if err != nil {
				return err
			}
			p, err := testbed.StartProcess("labeler daemon", labelerBin, []string{
				"--node-name=daemon-node", "--config=" + config, "--kubeconfig=" + saKubeconfig("daemon-node"),
			}, []string{"GOMEMLIMIT=48MiB"}, filepath.Join(workDir, "daemon.log"))
			if err != nil {
				return err
			}
			err = p.WaitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[1]), nil, 30*time.Second,
				func(status int) bool { return status == 200 })
			if err != nil {
				_ = p.Stop(10 * time.Second) // err carries its log tail
				return err
			}
			daemon, metricsPort = p, ports[0]
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				GinkgoWriter.Println(daemon.LogTail(60))
			}
			Expect(daemon.Stop(10 * time.Second)).To(Succeed())
		})

		By("labelling its node")
		Eventually(func(g Gomega) {
			g.Expect(getNode(ctx, "daemon-node").Labels).To(HaveKeyWithValue(n+"rv.v", "true"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("recording an Event on its node saying what changed and why")
		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(cp.Client.List(ctx, events, client.InNamespace("default"))).To(Succeed())
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Kind == "Node" && e.Regarding.Name == "daemon-node" && e.Reason == "LabelsChanged" {
					g.Expect(e.ReportingController).To(Equal("isamatch-labeler"))
					g.Expect(e.Type).To(Equal(corev1.EventTypeNormal))
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(SatisfyAll(HavePrefix("added "+n+"arch=riscv64, "), ContainSubstring(" ..."),
				ContainSubstring("source: decided by cpuinfo"), WithTransform(func(s string) int { return len(s) }, BeNumerically("<=", 1024)))))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("exposing its metrics")
		Eventually(func(g Gomega) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			lines := strings.Split(string(body), "\n")
			g.Expect(lines).To(ContainElement(HavePrefix("isamatch_labeler_probe_duration_seconds_count 1")))
			g.Expect(lines).To(ContainElement(MatchRegexp(`^isamatch_labeler_labels_written_total\{change="set"\} [1-9]`)))
			g.Expect(lines).To(ContainElement(`isamatch_labeler_probe_failures_total{source="cpuinfo"} 0`))
			g.Expect(lines).To(ContainElement(`isamatch_labeler_probe_errors_total 0`))
			g.Expect(lines).To(ContainElement(MatchRegexp(`^isamatch_build_info\{goversion="go[^"]+",revision="[^"]+",version="[^"]+"\} 1$`)))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("putting back a label someone removed")
		Expect(cp.Client.Patch(ctx, getNode(ctx, "daemon-node"), mergePatch(`{"metadata":{"labels":{"`+n+`rv.v":null}}}`))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getNode(ctx, "daemon-node").Labels).To(HaveKeyWithValue(n+"rv.v", "true"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("removing a stale label someone added under our prefix")
		Expect(cp.Client.Patch(ctx, getNode(ctx, "daemon-node"), mergePatch(`{"metadata":{"labels":{"`+n+`rv.xtheadvector":"true"}}}`))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getNode(ctx, "daemon-node").Labels).NotTo(HaveKey(n + "rv.xtheadvector"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("never touching another node")
		Expect(owned(getNode(ctx, "daemon-other").Labels)).To(BeEmpty())
	})
})
