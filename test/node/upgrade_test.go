package node

import (
	"net"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/test/node/cluster"
)

// previousRelease is the release the upgrade starts from: no tag exists
// yet, so a commit of main that landed before this one: the last whose
// binaries still accepted the setting flags (deprecated), and the first
// whose webhook serves its rotated certificate without waiting for the
// kubelet to update the mounted Secret. Its images are built from a git
// worktree of it with its own hack/images; its config/ is what `kubectl
// apply -k` installs first and its chart what Helm installs first.
const previousRelease = "b40d3bc0d3fa1bc5dd07ddb8541c39738b9ad1d0"

// gateBound is how long a gated pod may stay gated while the leader dies:
// the gate's timeout (20s, --gate-timeout), plus the takeover of the
// Lease by another replica (controller-runtime's lease duration 15s and
// retry period 2s), plus 20s for a busy machine.
const gateBound = 20*time.Second + 17*time.Second + 20*time.Second

var _ = Describe("upgrade, rollback and uninstall between releases on a real node", Ordered, func() {
	var (
		work    string
		helmBin string
		// prevConfig is config/ of the previous release, prevChart the
		// chart it is installed with.
		prevConfig, prevChart string
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
		prevChart = filepath.Join(prevDir, "charts", "isamatch")

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
		// A failed spec skips the rest, the uninstall too: leave the node
		// as the next suites expect it, without the release or its pods.
		AfterAll(func(ctx SpecContext) {
			GinkgoWriter.Print(helm(ctx, helmBin, "uninstall", "isamatch", "--namespace", "default", "--ignore-not-found", "--wait=watcher", "--timeout", "5m"))
			removePods(ctx)
		})
		values := func(labeler, webhook string) string {
			GinkgoHelper()
			return writeValues(work, labeler, webhook, reg.Host, blackhole)
		}
		// This release's chart as `make release` packaged it (dist/, its
		// images pinned by digest; the values below name the same ones).
		chart := func() string {
			GinkgoHelper()
			tgz, err := filepath.Glob(filepath.Join(dist, "isamatch-*.tgz"))
			Expect(err).NotTo(HaveOccurred())
			Expect(tgz).To(HaveLen(1), "the release's chart in %s", dist)
			return tgz[0]
		}

		It("installs the previous release's images with the previous chart", func(ctx SpecContext) {
			GinkgoWriter.Print(helm(ctx, helmBin, "install", "isamatch", prevChart, "--namespace", "default",
				"-f", values(prev["labeler"], prev["webhook"]), "--wait=watcher", "--timeout", "10m"))
			waitRollout(ctx, prev["labeler"], prev["webhook"])
			before = admitPods(ctx, "helm-a")
		})

		// The images move with their manifests: this release's binaries
		// read their settings from the configuration files only, which the
		// previous chart does not pass (docs/install.md).
		It("upgrades to this chart and webhook with no admission failing and no label lost, and decides as the previous one did", func(ctx SpecContext) {
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

		// Uninstalled from this release.
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
		AfterAll(func(ctx SpecContext) {
			if prevOverlay != "" {
				GinkgoWriter.Print(kubectlRun(ctx, "delete", "-k", prevOverlay, "--ignore-not-found", "--wait=true", "--timeout=5m"))
			}
			removePods(ctx)
		})
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

		It("applies this tree's config/ and images: no admission failing, the node keeps its labels", func(ctx SpecContext) {
			roll(ctx, "kust-c", before, cur["labeler"], cur["webhook"], func() {
				GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", overlay("kustomize-current", filepath.Join(dist, "config"), "", "")))
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
			uninstall := writeUninstallOverlay()
			GinkgoWriter.Print(kubectlRun(ctx, "apply", "-k", uninstall))
			GinkgoWriter.Print(kubectlRun(ctx, "-n", "isamatch-uninstall", "wait", "--for=condition=complete", "job/isamatch-prune", "--timeout=5m"))
			uninstalled(ctx, gated)
			GinkgoWriter.Print(kubectlRun(ctx, "delete", "-k", uninstall, "--wait=true", "--timeout=2m"))
		})
	})
})
