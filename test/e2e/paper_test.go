package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// paperSeed is the workload seed of the paper's experiment.
const paperSeed = 1

var _ = Describe("The paper's cluster (Table 1)", Ordered, ContinueOnFailure, func() {
	var (
		c    *democluster.Cluster
		rows []experiment.Row
	)

	BeforeAll(func(ctx SpecContext) {
		c = startCluster(ctx, democluster.Options{Nodes: experiment.PaperCluster()})
	}, NodeTimeout(5*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(c.LogTails(40))
		}
	})

	It("labels each node from its host root with the ISA of Table 1", func(ctx SpecContext) {
		isas, err := c.NodeISA(ctx)
		Expect(err).NotTo(HaveOccurred())
		// node4's IMFV normalises to IMFDV under the ratified spec (V needs D).
		Expect(isas["node3"]).To(HavePrefix("rv64imfd_"))
		Expect(isas["node3"]).NotTo(Equal(isas["node5"]))
		Expect(isas["node4"]).To(Equal(isas["node5"]), "node4 (IMFV) and node5 (IMFDV) are one ISA")
		Expect(isas["node5"]).To(HavePrefix("rv64imfdv"))
		Expect(isas["node1"]).To(HavePrefix("x86-64"))
		Expect(isas["node2"]).To(HavePrefix("arm64"))
	})

	for _, sc := range experiment.Scenarios() {
		It(fmt.Sprintf("runs scenario %s (%s) stock and with isamatch", sc.Name, sc.Title), func(ctx SpecContext) {
			runner := c.Runner(GinkgoWriter)
			tasks := experiment.Workload(paperSeed, 100, sc.Needs)
			stock, _, err := runner.Run(ctx, sc, false, tasks)
			Expect(err).NotTo(HaveOccurred())
			withIsamatch, placements, err := runner.Run(ctx, sc, true, tasks)
			Expect(err).NotTo(HaveOccurred())
			rows = append(rows, experiment.Row{Scenario: sc, Stock: stock, Isamatch: withIsamatch})
			AddReportEntry(sc.Name, fmt.Sprintf("stock correct %.0f%% best fit %.0f%%; isamatch correct %.0f%% best fit %.0f%% (%d/%d eligible)",
				100*stock.Correctness(), 100*stock.BestFitRate(), 100*withIsamatch.Correctness(), 100*withIsamatch.BestFitRate(),
				withIsamatch.BestFit, withIsamatch.Eligible))

			// What the webhook decides for this scenario's first task (a
			// dry run), for the report and for failure messages.
			decision := dryRunDecision(ctx, c, sc.Pod(tasks[0], true, c.Registry.Host))
			AddReportEntry(sc.Name+" decision for "+tasks[0].Name, decision)

			Expect(withIsamatch.Correct).To(Equal(withIsamatch.Pods),
				"isamatch must place every pod on a node that can run it; wrong: %v", withIsamatch.Wrong)
			Expect(withIsamatch.BestFit).To(Equal(withIsamatch.Eligible),
				"isamatch must place every eligible pod on a best-fit node; off best fit: %s; the webhook's decision for %s: %s",
				offBestFit(c.Nodes, sc, placements), tasks[0].Name, decision)
			// The stock scheduler must be measurably wrong, or the harness
			// constrained the stock pods without saying so.
			switch sc.Name {
			case "base", "ext-image":
				Expect(stock.Correctness()).To(BeNumerically("<", 0.9), "stock scheduler too good in %s: %+v", sc.Name, stock.PerNode)
			case "ext-hint":
				Expect(stock.Correctness()).To(BeNumerically("<", 1.0), "stock scheduler too good in %s: %+v", sc.Name, stock.PerNode)
			}
		}, SpecTimeout(3*time.Minute))
	}

	kubectlISASpecs(func() *democluster.Cluster { return c })

	It("prints the table of the paper's experiment", func() {
		Expect(rows).NotTo(BeEmpty())
		var b strings.Builder
		experiment.PrintTable(&b, rows, c.Nodes)
		AddReportEntry("paper experiment table", b.String())
		GinkgoWriter.Println(b.String())
	})

	It("sends 1-CPU cross-compile tasks to the emulating master until it is full, then to native RV64IMFDV nodes", func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "qemu-flow-"}}
		Expect(c.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))).To(Succeed())
			Expect(c.Client.Delete(ctx, ns)).To(Succeed())
		})
		Expect(c.PrepareNamespace(ctx, ns.Name)).To(Succeed())
		qemu := experiment.Scenarios()[slices.IndexFunc(experiment.Scenarios(), func(s experiment.Scenario) bool { return s.Emulation })]

		// node1 has 8 CPUs: eight 1-CPU tasks fill it.
		const n = 14
		var order []string
		for i := range n {
			t := experiment.Task{Name: fmt.Sprintf("cross-%02d", i), Kind: "compute", MilliCPU: 1000, MemMi: 256, Need: "RV64IMFDV"}
			pod := qemu.Pod(t, true, c.Registry.Host)
			pod.Namespace = ns.Name
			Expect(pod.Annotations).To(HaveKeyWithValue(isa.BareQEMUAnnotation, "rv64imfdv"))
			Expect(c.Client.Create(ctx, pod)).To(Succeed())
			Expect(testbed.WaitScheduled(ctx, c.Client, []*corev1.Pod{pod})).To(Succeed())
			order = append(order, pod.Spec.NodeName)
		}
		AddReportEntry("qemu flow", strings.Join(order, " "))
		Expect(order[:8]).To(HaveEach("node1"), "the first 8 tasks emulate on node1: %v", order)
		// node4 (IMFV, which is IMFDV under the ratified spec) and node5 form
		// one ISA group: either is a native RV64IMFDV node.
		Expect(order[8:]).To(HaveEach(BeElementOf("node4", "node5")), "the rest run natively: %v", order)
	}, SpecTimeout(2*time.Minute))
})

// dryRunDecision admits pod as a dry run in a prepared namespace and
// returns the webhook's decision annotation.
func dryRunDecision(ctx SpecContext, c *democluster.Cluster, pod *corev1.Pod) string {
	GinkgoHelper()
	const ns = "decisions"
	Expect(c.PrepareNamespace(ctx, ns)).To(Succeed())
	pod.Namespace = ns
	Expect(c.Client.Create(ctx, pod, client.DryRunAll)).To(Succeed())
	return pod.Annotations[isa.DecisionAnnotation]
}

// offBestFit describes the placements the oracle did not count as best fit.
func offBestFit(nodes []experiment.NodeSpec, sc experiment.Scenario, placements []experiment.Placement) string {
	var out []string
	for i := range placements {
		r := experiment.Evaluate(nodes, sc, true, placements[:i+1])
		before := experiment.Evaluate(nodes, sc, true, placements[:i])
		if r.Eligible > before.Eligible && r.BestFit == before.BestFit {
			out = append(out, fmt.Sprintf("%s(%s)->%s", placements[i].Task.Name, placements[i].Task.Need, placements[i].Node))
		}
	}
	if len(out) > 12 {
		out = append(out[:12], fmt.Sprintf("and %d more", len(out)-12))
	}
	return strings.Join(out, " ")
}
