package node

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/isamatch/isamatch/internal/krew"
)

// quickstartPage is the page whose shell blocks the install specs run.
const quickstartPage = "docs/quickstart.md"

// The quickstart's shell blocks, in the page's order.
const (
	qsInstall   = iota // kubectl apply -k config, the rollouts
	qsNodes            // what the node runs
	qsPod              // the pod "fits", with a request the node has
	qsExplain          // its decision
	qsNoNode           // a pod whose request the node lacks
	qsTypo             // a request that does not parse
	qsUninstall        // the namespace, config, the uninstall Job
	qsBlocks
)

// quickstart runs the quickstart's commands as a reader does: in a
// directory whose config/ is the suite's install overlay (the release's
// config with this registry's settings) and config/components/uninstall
// the release's, with kubectl and the release's kubectl-isa on PATH and
// the cluster in KUBECONFIG. What the page pulls from the internet (busybox) is the
// suite's multi-arch pause image, which has a sleep; its example request
// is this node's x86-64 level.
type quickstart struct {
	dir    string
	env    []string
	blocks []string
}

// newQuickstart lays out the reader's directory under work and reads the
// page's blocks.
func newQuickstart(ctx context.Context, work string) *quickstart {
	GinkgoHelper()
	q := &quickstart{dir: filepath.Join(work, "quickstart")}
	bin := filepath.Join(q.dir, "bin")
	Expect(os.MkdirAll(bin, 0o755)).To(Succeed())
	Expect(os.Symlink(kubectl, filepath.Join(bin, "kubectl"))).To(Succeed())
	installPlugin(ctx, bin)
	q.env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECONFIG="+cl.Kubeconfig)
	writeResourceKustomization(filepath.Join(q.dir, "config"), overlay)
	writeResourceKustomization(filepath.Join(q.dir, "config", "components", "uninstall"), filepath.Join(dist, "config", "components", "uninstall"))

	page, err := os.ReadFile(filepath.Join(repoRoot, quickstartPage))
	Expect(err).NotTo(HaveOccurred())
	q.blocks = shellBlocks(string(page))
	Expect(q.blocks).To(HaveLen(qsBlocks), "%s has %d shell blocks, the install specs run %d: change quickstart_test.go with the page", quickstartPage, len(q.blocks), qsBlocks)
	// The page's example request, x86-64-v2, is what the reader's node has.
	replacer := strings.NewReplacer("busybox:1.37", pauseImage, "x86-64-v2", hostRequest())
	for i, b := range q.blocks {
		q.blocks[i] = replacer.Replace(b)
	}
	return q
}

// writeResourceKustomization writes in dir a kustomization of the one
// resource target.
func writeResourceKustomization(dir, target string) {
	GinkgoHelper()
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	rel, err := filepath.Rel(dir, target)
	Expect(err).NotTo(HaveOccurred())
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n", rel)
	Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644)).To(Succeed())
}

// shellBlocks returns the bodies of page's ```sh code blocks.
func shellBlocks(page string) []string {
	var blocks []string
	var b strings.Builder
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in = true
			b.Reset()
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, b.String())
		case in:
			b.WriteString(line + "\n")
		}
	}
	return blocks
}

// lines returns the commands of block i from the first to the last
// (counted from 0), heredocs aside: for running a block in parts.
func (q *quickstart) lines(i, first, last int) string {
	GinkgoHelper()
	lines := strings.Split(strings.TrimSpace(q.blocks[i]), "\n")
	Expect(len(lines)).To(BeNumerically(">", last), "%s block %d:\n%s", quickstartPage, i, q.blocks[i])
	return strings.Join(lines[first:last+1], "\n") + "\n"
}

// run runs script with bash -e in the reader's directory and returns its
// output and error.
func (q *quickstart) run(ctx context.Context, script string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir, cmd.Env = q.dir, q.env
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("$ %s%s", strings.ReplaceAll(script, "\n", "\n$ "), out)
	return string(out), err
}

// mustRun is run that expects success.
func (q *quickstart) mustRun(ctx context.Context, script string) string {
	GinkgoHelper()
	out, err := q.run(ctx, script)
	Expect(err).NotTo(HaveOccurred(), "%s:\n%s", script, out)
	return out
}

// installPlugin installs the release's kubectl plugin into bin as krew
// would from its manifest: the archive for this machine that the manifest
// names, checked against the manifest's digest, its kubectl-isa
// executable; it returns the executable's path.
func installPlugin(ctx context.Context, bin string) string {
	GinkgoHelper()
	manifest, err := os.ReadFile(filepath.Join(dist, krew.ManifestName))
	Expect(err).NotTo(HaveOccurred(), "the release's krew manifest")
	p, err := krew.Check(manifest, imageTag)
	Expect(err).NotTo(HaveOccurred(), "%s", manifest)
	want := "linux/" + runtime.GOARCH
	var pl *krew.Platform
	for i := range p.Spec.Platforms {
		if p.Spec.Platforms[i].OSArch() == want {
			pl = &p.Spec.Platforms[i]
		}
	}
	Expect(pl).NotTo(BeNil(), "the manifest has no %s archive:\n%s", want, manifest)
	archive, err := os.ReadFile(filepath.Join(dist, path.Base(pl.URI)))
	Expect(err).NotTo(HaveOccurred(), "the archive the manifest names is in dist/")
	Expect(fmt.Sprintf("%x", sha256.Sum256(archive))).To(Equal(pl.SHA256), "the manifest's digest of %s", path.Base(pl.URI))
	run(ctx, bin, "tar", "-xzf", filepath.Join(dist, path.Base(pl.URI)), pl.Bin)
	exe := filepath.Join(bin, pl.Bin)
	Expect(run(ctx, bin, exe, "version")).To(ContainSubstring(imageTag), "the plugin says its release")
	return exe
}
