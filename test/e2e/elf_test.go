package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ggcrmutate "github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/test/framework"
)

// elfBinary is the -march of the binary each extension task's image holds:
// GCC records it in .riscv.attributes. IMFV is IMFDV under the ratified
// spec (V needs D), so both run the rv64imfdv binary.
var elfBinary = map[string]string{
	"RV64IMFD":  "rv64imfd",
	"RV64IMFV":  "rv64imfdv",
	"RV64IMFDV": "rv64imfdv",
}

// The paper's experiment 2 (extension tasks, the image declares the ISA)
// with images that declare nothing: no isa.request label, no variant, only
// an entrypoint built by Debian's gcc-riscv64-linux-gnu. The webhook runs
// in gate mode and learns each image's ISA from its binary.
var _ = Describe("ISA inferred from the entrypoint's ELF attributes", Ordered, ContinueOnFailure, func() {
	var (
		c        *democluster.Cluster
		binaries map[string][]byte // by -march
		built    string            // where the binaries came from
	)

	BeforeAll(func(ctx SpecContext) {
		binaries, built = elfBinaries(ctx)
		c = startCluster(ctx, democluster.Options{Nodes: experiment.PaperCluster(),
			ConfigureWebhook: func(wc *v1alpha1.WebhookConfiguration) {
				wc.Admission.Resolve, wc.LeaderElection.Enabled, wc.Inference.ELF = mutate.ResolveGate, false, true
			}})
		AddReportEntry("ELF binaries", built)
		for march, bin := range binaries {
			Expect(pushELFImage(ctx, c, "elf/ext", march, bin)).To(Succeed())
		}
	}, NodeTimeout(5*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(c.LogTails(40))
		}
	})

	extImage := experiment.Scenarios()[1]
	It("places experiment 2's tasks correctly and on their best fit, like the labelled run", func(ctx SpecContext) {
		Expect(extImage.Name).To(Equal("ext-image"))
		sc := extImage
		sc.Name, sc.Title = "ext-elf", "RISC-V extension tasks, images with only an ELF entrypoint (isamatch reads its -march)"
		sc.Pod = func(t experiment.Task, isamatch bool, reg string) *corev1.Pod {
			p := extImage.Pod(t, isamatch, reg)
			p.Spec.Containers[0].Image = reg + "/elf/ext:" + elfBinary[t.Need]
			return p
		}
		tasks := experiment.Workload(paperSeed, 100, sc.Needs)
		start := time.Now()
		res, placements, err := c.Runner(GinkgoWriter).Run(ctx, sc, true, tasks)
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry(sc.Name, fmt.Sprintf("isamatch (gate, ELF) correct %.0f%% best fit %.0f%% (%d/%d eligible) in %.1fs",
			100*res.Correctness(), 100*res.BestFitRate(), res.BestFit, res.Eligible, time.Since(start).Seconds()))

		Expect(res.Correct).To(Equal(res.Pods), "every pod on a node that can run it; wrong: %v", res.Wrong)
		Expect(res.BestFit).To(Equal(res.Eligible), "every eligible pod on a best-fit node; off best fit: %s",
			offBestFit(c.Nodes, sc, placements))
	}, SpecTimeout(3*time.Minute))

	It("says in the decision that the requirement came from the binary", func(ctx SpecContext) {
		pod := runGated(ctx, c, "elf/ext:rv64imfdv")
		Expect(pod.Spec.NodeName).To(BeElementOf("node4", "node5"))
		Eventually(func(g Gomega) {
			note, err := testbed.DecisionNote(ctx, c.Client, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(note).To(And(ContainSubstring("needs rv64imfdv"), ContainSubstring("(ELF of /usr/bin/app)")), "the gate controller's release Event")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		counts, err := contract.ParseDecision(pod.Annotations)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts.Inferred).To(Equal(1))
		Expect(counts.Gate).To(Equal(contract.GateResolved))
		scans, found, err := testbed.MetricValue(scrape(ctx, "http://"+c.WebhookMetricsAddr+"/metrics"), "isamatch_elf_scans_total", map[string]string{"outcome": "isa"})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "isamatch_elf_scans_total{outcome=isa} not exported")
		// One scan per image digest (two binaries in experiment 2), then
		// the cache: never one per pod.
		Expect(scans).To(BeNumerically("<=", 3), "scans of images with an ISA")
		hits, _, err := testbed.MetricValue(scrape(ctx, "http://"+c.WebhookMetricsAddr+"/metrics"), "isamatch_elf_cache_hits_total", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(hits).To(BeNumerically(">=", 90), "experiment 2's 100 pods read the cache")
	}, SpecTimeout(time.Minute))

	It("keeps a pod whose binary needs what no node has (rv64gcv_zba_zbb) off every node", func(ctx SpecContext) {
		pod := runGated(ctx, c, "elf/ext:rv64gcv_zba_zbb")
		Expect(pod.Spec.NodeName).To(BeEmpty())
		Expect(testbed.IsUnschedulable(pod)).To(BeTrue(), "no paper node has A, C, Zba and Zbb")
	}, SpecTimeout(time.Minute))
})

// elfBinaries builds the three test programs with the RISC-V cross
// compiler (hack/elf-fixtures.sh), or takes pkg/imageisa's committed
// fixtures, built the same way, when the compiler is not installed (a
// failure under CI=true: hack/deps.sh installs it).
func elfBinaries(ctx SpecContext) (map[string][]byte, string) {
	GinkgoHelper()
	root, err := testbed.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(root, "pkg/imageisa/testdata/elf")
	built := "committed fixtures pkg/imageisa/testdata/elf (riscv64-linux-gnu-gcc not installed)"
	if _, err := exec.LookPath("riscv64-linux-gnu-gcc"); err == nil {
		dir = GinkgoT().TempDir()
		out, err := exec.CommandContext(ctx, filepath.Join(root, "hack/elf-fixtures.sh"), dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "hack/elf-fixtures.sh: %s", out)
		v, _ := exec.CommandContext(ctx, "riscv64-linux-gnu-gcc", "--version").Output()
		built = "built now by " + strings.SplitN(string(v), "\n", 2)[0]
	} else if framework.InCI() {
		Fail("riscv64-linux-gnu-gcc not found: hack/deps.sh installs gcc-riscv64-linux-gnu")
	}
	out := map[string][]byte{}
	for _, march := range []string{"rv64imfd", "rv64imfdv", "rv64gcv_zba_zbb"} {
		b, err := os.ReadFile(filepath.Join(dir, "riscv64-"+march))
		Expect(err).NotTo(HaveOccurred())
		out[march] = b
	}
	return out, built
}

// pushELFImage pushes repo:tag as an index with one linux/riscv64 image
// whose only layer holds bin as /usr/bin/app, its entrypoint: no label, no
// variant.
func pushELFImage(ctx SpecContext, c *democluster.Cluster, repo, tag string, bin []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/app", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))},
	} {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	if _, err := tw.Write(bin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img, err := ggcrmutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	img = ggcrmutate.ConfigMediaType(ggcrmutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "riscv64"
	cf.Config.Entrypoint = []string{"/usr/bin/app"}
	if img, err = ggcrmutate.ConfigFile(img, cf); err != nil {
		return err
	}
	idx := ggcrmutate.AppendManifests(ggcrmutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		ggcrmutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}}})
	ref, err := name.NewTag(c.Registry.Ref(repo, tag), name.StrictValidation)
	if err != nil {
		return err
	}
	return remote.WriteIndex(ref, idx, c.Registry.RemoteOptions(ctx)...)
}

// runGated creates one pod of image in a prepared namespace and waits until
// it is bound or unschedulable, after the gate controller released it.
func runGated(ctx SpecContext, c *democluster.Cluster, image string) *corev1.Pod {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "elf-"}}
	Expect(c.Client.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))).To(Succeed())
		Expect(c.Client.Delete(ctx, ns)).To(Succeed())
	})
	Expect(c.PrepareNamespace(ctx, ns.Name)).To(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: c.Registry.Host + "/" + image}},
			TerminationGracePeriodSeconds: new(int64)},
	}
	Expect(c.Client.Create(ctx, pod)).To(Succeed())
	Expect(engine.HasGate(pod.Spec.SchedulingGates)).To(BeTrue(), "admitted without the gate")
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return pod.Spec.NodeName != "" || testbed.IsUnschedulable(pod), nil
	})
	Expect(err).NotTo(HaveOccurred(), "pod %s neither bound nor unschedulable", image)
	return pod
}

// scrape returns the Prometheus text at url.
func scrape(ctx context.Context, url string) string {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "metrics: %s", body)
	return string(body)
}
