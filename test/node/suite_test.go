package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/hack/probes"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/test/framework"
	"github.com/isamatch/isamatch/test/node/cluster"
)

func TestNode(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	// The suite runs go in hack/release and charts/, modules of their own
	// outside go.work, as the Makefile does: with the workspace on, a plain
	// `go test ./test/node` would fail in BeforeSuite ("main module does
	// not contain package").
	t.Setenv("GOWORK", "off")
	RunSpecs(t, "Real node suite")
}

// NodeAssetsEnv names the directory of `hack/controlplane.sh node`.
const NodeAssetsEnv = "ISAMATCH_NODE_ASSETS"

const (
	namespace = "isamatch-system"
	optRISCV  = "/opt/RISCV"
	// imageTag is the version of the release the suite makes: its images'
	// tag and its chart's version.
	imageTag = "v0.0.0-node"
)

var (
	repoRoot string
	cl       *cluster.Cluster
	reg      *cluster.Registry
	host     cluster.Host
	// kubectl is the pinned kubectl of hack/controlplane.sh node.
	kubectl string
	// overlay is the kustomization directory the suite applies, over
	// dist's config/.
	overlay string
	// dist is the directory `make release` wrote: install.yaml, images.txt,
	// config/ and the chart with every image pinned by digest, SHA256SUMS.
	dist string
	// pauseImage is the multi-arch image (amd64, arm64, riscv64) built from
	// testdata/pause; it is also the sandbox image.
	pauseImage string
	// wantLabels are `labeler --print` on this host.
	wantLabels map[string]string
	// hostPrograms is the probe programs' directory for `labeler --print`
	// on this host, as /probes is in the labeler's image.
	hostPrograms string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	nodeAssets := os.Getenv(NodeAssetsEnv)
	if nodeAssets == "" {
		Skip(NodeAssetsEnv + " is not set: `make test` and `make test-node` set it")
	}
	cpAssets, err := testbed.AssetsDir()
	Expect(err).NotTo(HaveOccurred())
	host, err = cluster.Check(cpAssets, nodeAssets)
	skipOrFail(err)
	kubectl = filepath.Join(nodeAssets, "kubectl")

	// One node suite per machine at a time: the bridge, the iptables rules
	// and the cgroups are host-wide.
	lock, err := os.OpenFile("/run/isamatch-node.lock", os.O_CREATE|os.O_RDWR, 0o600)
	Expect(err).NotTo(HaveOccurred())
	Expect(syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)).To(Succeed())
	DeferCleanup(lock.Close)

	// Short: containerd's socket path under it must stay under 108 bytes.
	dir, err := os.MkdirTemp("/tmp", "isamatch-node-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if os.Getenv("ISAMATCH_KEEP_TMP") != "true" {
			_ = os.RemoveAll(dir)
		}
	})

	Expect(cluster.CheckDisk(dir)).To(Succeed())

	// The image's probe programs, so that a QEMU handler the host has
	// registered is probed on the host as the DaemonSet's pod probes it.
	// The labeler runs them as its commands' user (65534) and refuses a
	// program under a directory others may write: not under /tmp.
	hostPrograms, err = os.MkdirTemp("/run", "isamatch-node-probes-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = os.RemoveAll(hostPrograms) })
	Expect(os.Chmod(hostPrograms, 0o755)).To(Succeed())
	Expect(probes.Build(ctx, hostPrograms)).To(Succeed())
	wantLabels = hostLabels(ctx, dir, host.NodeName)

	reg, err = cluster.StartRegistry(ctx, host.NodeIP, filepath.Join(dir, "registry"))
	skipOrFail(err)
	DeferCleanup(reg.Stop)

	pauseImage = reg.Host + "/isamatch-test/pause:" + imageTag
	By("building the pause image for " + strings.Join(cluster.PausePlatforms, ", ") + " and pushing " + pauseImage)
	_, err = cluster.PushPause(ctx, filepath.Join(repoRoot, "test", "node", "testdata", "pause"), dir, pauseImage)
	Expect(err).NotTo(HaveOccurred())

	By("make release: the labeler and webhook images for linux/" + runtime.GOARCH + " pushed by digest to " + reg.Host + " with their SBOMs, the kubectl plugin's archive and krew manifest, and dist/ (checked with sha256sum -c), while the node starts")
	dist = filepath.Join(dir, "dist")
	// The release compiles while the node's components start, which
	// mostly wait on each other.
	released := make(chan error, 1)
	go func() { released <- makeRelease(ctx, dir) }()
	overlay = writeOverlay(dir)

	// The labeler's DaemonSet mounts /opt/RISCV with DirectoryOrCreate: the
	// kubelet creates it on a host without RISC-V cross compilers. Remove it
	// again if this run made it (os.Remove leaves a non-empty directory).
	if _, err := os.Stat(optRISCV); errors.Is(err, os.ErrNotExist) {
		DeferCleanup(func() { _ = os.Remove(optRISCV) })
	}

	By("starting the node")
	cl, err = cluster.Start(ctx, cluster.Options{
		ControlPlaneDir: cpAssets, NodeDir: nodeAssets, Dir: filepath.Join(dir, "node"),
		Host: host, Registry: reg.Host, PauseImage: pauseImage,
	})
	if err == nil {
		DeferCleanup(func(ctx SpecContext) {
			Expect(cl.Stop()).To(Succeed())
		}, NodeTimeout(5*time.Minute))
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(<-released).To(Succeed(), "make release")
	GinkgoWriter.Printf("node %s (%s) Ready; cgroup v1: %t, overlayfs: %t; logs in %s\n",
		host.NodeName, host.NodeIP, host.CgroupV1, host.Overlay, cl.LogDir())
}, NodeTimeout(40*time.Minute))

var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() && cl != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if p, err := cl.Pressure(ctx); err != nil {
			AddReportEntry("what keeps pods off the node", err.Error())
		} else if p != "" {
			AddReportEntry("what keeps pods off the node", p)
		}
		AddReportEntry("component logs", cl.LogTails(30))
	}
})

// failOnPressure ends a wait at once, naming the cause, when the node
// reports pressure or carries a taint: the pods it waits for would stay
// Pending until its timeout. A failed read only lets the wait go on.
func failOnPressure(ctx context.Context) {
	if p, err := cl.Pressure(ctx); err == nil && p != "" {
		StopTrying("the node cannot take pods: " + p).Now()
	}
}

// skipOrFail skips the suite for what the machine cannot do and for a
// missing prerequisite outside CI; under CI=true a missing binary or
// package (that hack/deps.sh node or hack/controlplane.sh node provides)
// fails it.
func skipOrFail(err error) {
	GinkgoHelper()
	if err == nil {
		return
	}
	var unsupported *cluster.Unsupported
	switch {
	case errors.As(err, &unsupported):
		Skip("this machine cannot run a node: " + err.Error())
	case cluster.IsMissing(err) && !framework.InCI():
		Skip("missing: " + err.Error() + " (CI=true makes this a failure)")
	default:
		Fail(err.Error())
	}
}

// run runs a command in dir and fails with its output.
func run(ctx context.Context, dir, bin string, args ...string) string {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", bin, strings.Join(args, " "), out)
	return string(out)
}

// makeRelease is `make release` for this machine's platform into
// dir/dist, its images pushed to the suite's registry, then checked as a
// user does (sha256sum -c SHA256SUMS). Only this machine's platform: the
// kubelet here pulls nothing else, and each further platform is minutes
// of cross compiling (`make release` builds all three). The steps are the
// Makefile's.
func makeRelease(ctx context.Context, dir string) error {
	oci := filepath.Join(dir, "oci")
	plugin := filepath.Join(dir, "plugin")
	steps := []struct {
		dir  string
		args []string
	}{
		{repoRoot, []string{"go", "run", "./hack/images", "--repo", reg.Host + "/isamatch", "--tag", imageTag, "--oci-layout", oci,
			"--only", "labeler,webhook", "--platforms", "linux/" + runtime.GOARCH}},
		{repoRoot, []string{"go", "run", "./hack/plugin", "--version", imageTag, "--out", plugin, "--platforms", "linux/" + runtime.GOARCH}},
		{repoRoot, []string{"go", "-C", "hack/release", "run", ".", "--repo", reg.Host + "/isamatch", "--version", imageTag,
			"--oci-layout", oci, "--plugin", plugin, "--dist", dist, "--root", repoRoot, "--insecure"}},
		{dist, []string{"sha256sum", "--check", "--strict", "SHA256SUMS"}},
	}
	for _, st := range steps {
		cmd := exec.CommandContext(ctx, st.args[0], st.args[1:]...)
		cmd.Dir = st.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w\n%s", strings.Join(st.args, " "), err, out)
		}
	}
	return nil
}

// kubectlRun runs the pinned kubectl as the cluster's admin.
func kubectlRun(ctx context.Context, args ...string) string {
	GinkgoHelper()
	return run(ctx, repoRoot, kubectl, append([]string{"--kubeconfig=" + cl.Kubeconfig}, args...)...)
}

// writeUninstallOverlay writes, beside the install overlay, an overlay of
// the release's components/uninstall, its labeler image pinned by digest.
func writeUninstallOverlay() string {
	GinkgoHelper()
	ov := filepath.Join(filepath.Dir(overlay), "uninstall")
	Expect(os.MkdirAll(ov, 0o755)).To(Succeed())
	rel, err := filepath.Rel(ov, filepath.Join(dist, "config", "components", "uninstall"))
	Expect(err).NotTo(HaveOccurred())
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
`, rel)
	Expect(os.WriteFile(filepath.Join(ov, "kustomization.yaml"), []byte(kustomization), 0o644)).To(Succeed())
	return ov
}

// hostLabels builds cmd/labeler and prints the labels it finds on this
// host, the same probe the DaemonSet's pod runs against /host, for node
// (its group's domain label names the node).
func hostLabels(ctx context.Context, dir, node string) map[string]string {
	GinkgoHelper()
	bin := filepath.Join(dir, "labeler")
	run(ctx, repoRoot, "go", "build", "-o", bin, "./cmd/labeler")
	config, err := configfile.Labeler(dir, func(c *v1alpha1.LabelerConfiguration) {
		c.HostRoot = "/"
		c.Emulation.ProbePrograms = hostPrograms
	})
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.CommandContext(ctx, bin, "--print", "--config="+config, "--node-name="+node)
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "labeler --print")
	labels := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		Expect(ok).To(BeTrue(), "labeler --print line %q", line)
		labels[k] = v
	}
	Expect(labels).NotTo(BeEmpty())
	return labels
}

// writeOverlay writes the overlay a user of the release writes: dist's
// config/, its images already pinned by digest, with the webhook told that
// the suite's registry speaks plain HTTP.
func writeOverlay(dir string) string {
	GinkgoHelper()
	return writeKustomization(filepath.Join(dir, "overlay"), filepath.Join(dist, "config"), "", "", reg.Host)
}
