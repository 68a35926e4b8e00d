package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/kubectlisa"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// kubectlISASpecs runs the kubectl-isa binary, as a user does, against the
// cluster of the enclosing ordered container: nodes, check and explain of a
// pod the real webhook admitted and the real scheduler bound.
func kubectlISASpecs(cluster func() *democluster.Cluster) {
	var bin string
	kubectlISA := func(ctx SpecContext, out any, args ...string) {
		GinkgoHelper()
		c := cluster()
		if bin == "" {
			bins, err := gobuild.Binaries(ctx, c.RepoRoot, filepath.Join(c.Dir, "kubectl-isa"), gobuild.Options{}, "./cmd/kubectl-isa")
			Expect(err).NotTo(HaveOccurred())
			bin = bins[0]
		}
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", c.CP.KubeconfigPath, "-o", "json"}, args...)...)
		raw, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "kubectl isa %s", strings.Join(args, " "))
		Expect(json.Unmarshal(raw, out)).To(Succeed(), "kubectl isa %s printed:\n%s", strings.Join(args, " "), raw)
	}

	It("kubectl isa lists the nodes with the labeler's ISA", func(ctx SpecContext) {
		c := cluster()
		var rows []kubectlisa.NodeRow
		kubectlISA(ctx, &rows, "nodes")
		isas, err := c.NodeISA(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(len(c.Nodes)))
		for _, r := range rows {
			Expect(r.Labelled).To(BeTrue(), "node %s", r.Name)
			Expect(isas).To(HaveKey(r.Name))
			// kubectl isa prints the short form (implied extensions left out).
			short, err := isa.Parse(r.ISA)
			Expect(err).NotTo(HaveOccurred(), "node %s: kubectl isa says %q", r.Name, r.ISA)
			full, err := isa.Parse(isas[r.Name])
			Expect(err).NotTo(HaveOccurred(), "node %s: labelled %q", r.Name, isas[r.Name])
			Expect(short.String()).To(Equal(full.String()), "node %s: kubectl isa says %q, the labels %q", r.Name, r.ISA, isas[r.Name])
		}
	})

	It("kubectl isa check ranks the exact-fit nodes first and leaves out the ones that cannot run it", func(ctx SpecContext) {
		var res kubectlisa.CheckResult
		kubectlISA(ctx, &res, "check", "rv64imfd")
		names := func(rows []kubectlisa.CheckRow) []string {
			var out []string
			for _, r := range rows {
				out = append(out, r.Node)
			}
			return out
		}
		// node3 is RV64IMFD; node4 and node5 (IMFDV) can run it too, at a
		// lower tier; x86-64 and arm64 nodes cannot (no emulation asked).
		Expect(res.Nodes).NotTo(BeEmpty())
		Expect(res.Nodes[0].Node).To(Equal("node3"), "ranking: %v", names(res.Nodes))
		Expect(names(res.Nodes)).To(ContainElements("node4", "node5"))
		Expect(names(res.Nodes)).NotTo(ContainElements("node2"))
		Expect(res.Nodes[0].Weight).To(BeNumerically(">", res.Nodes[len(res.Nodes)-1].Weight), "the exact fit scores above the richer nodes")
	})

	It("kubectl isa explain tells where a placed pod is and why", func(ctx SpecContext) {
		c := cluster()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "explain-"}}
		Expect(c.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))).To(Succeed())
			Expect(c.Client.Delete(ctx, ns)).To(Succeed())
		})
		Expect(c.PrepareNamespace(ctx, ns.Name)).To(Succeed())
		pod := testbed.MakePod("vector", ns.Name).Image(c.Registry.Host+"/paper/base:v1").Annotation(isa.RequestAnnotation, "rv64imfdv").Obj()
		Expect(c.Client.Create(ctx, pod)).To(Succeed())
		Expect(testbed.WaitScheduled(ctx, c.Client, []*corev1.Pod{pod})).To(Succeed())
		Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())

		var ex kubectlisa.Explanation
		// The readable line is the webhook's IsamatchDecided Event, recorded
		// after admission by its own workers.
		Eventually(func(g Gomega) {
			ex = kubectlisa.Explanation{}
			kubectlISA(ctx, &ex, "explain", "-n", ns.Name, "pod/"+pod.Name)
			g.Expect(ex.Decision).To(ContainSubstring("rv64imfdv"), "the decision's line names the request")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(ex.Decided).To(BeTrue(), "decision %q", ex.Decision)
		Expect(ex.Counts).NotTo(BeNil())
		Expect(ex.Counts.Encode()).To(Equal(pod.Annotations[isa.DecisionAnnotation]), "the decision as stored")
		Expect(ex.Request).NotTo(BeNil())
		Expect(ex.Request.Text).To(Equal("rv64imfdv"))
		Expect(ex.Node).To(Equal(pod.Spec.NodeName))
		Expect(ex.Node).To(BeElementOf("node4", "node5"), "an RV64IMFDV request runs only on the vector nodes")
		Expect(ex.Tiers).NotTo(BeEmpty())
		Expect(ex.NodeTier).To(Equal(ex.Tiers[0].Tier), "the pod is on a node of the best tier")
		Expect(slices.ContainsFunc(ex.Tiers, func(t kubectlisa.Tier) bool { return slices.Contains(t.Nodes, ex.Node) })).To(BeTrue(),
			"the pod's node %s is in one of the tiers %+v", ex.Node, ex.Tiers)
	})
}
