package democluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Object names democluster relies on.
const (
	// PullSecretName is the kubernetes.io/dockerconfigjson Secret that
	// PrepareNamespace puts on each namespace's default ServiceAccount.
	PullSecretName = "isamatch-registry"
	// ProbeImage is the multi-arch image the readiness probe uses.
	ProbeImage = "democluster/probe"
	// probeNamespace is where the webhook's readiness is probed.
	probeNamespace = "democluster-probe"
)

// Options configures Start.
type Options struct {
	// Nodes are the simulated nodes. A node's Fixture is a directory under
	// pkg/probe/testdata, or an absolute path to a host root.
	Nodes []experiment.NodeSpec
	// ExtraImages are pushed besides experiment.Images().
	ExtraImages []experiment.Image
	// ExtraNodeLabels, when set, returns labels a node gets at creation
	// besides the kubelet's (zones for user-written affinity, say).
	ExtraNodeLabels func(experiment.NodeSpec) map[string]string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// BinDir receives the labeler and webhook binaries; empty means
	// <repo>/bin (git-ignored).
	BinDir string
	// Dir holds logs, certificates and registry storage. Empty means a new
	// temporary directory, removed by Stop unless ISAMATCH_KEEP_TMP=true.
	Dir string
	// Parallel bounds concurrent labeler runs and image pushes (default 4).
	Parallel int
	// ConfigureWebhook, when set, changes the webhook's configuration
	// (Admission.Enforcement = warn, say) after the cluster's own settings.
	ConfigureWebhook func(*v1alpha1.WebhookConfiguration)
	// Flags are extra kube-apiserver and kube-scheduler flags.
	Flags Flags
}

// Cluster is a running demo cluster.
type Cluster struct {
	// Stage holds the repository root (RepoRoot), the working directory
	// (Dir: logs and certificates) and the parts to stop.
	*testbed.Stage
	// CP is the control plane (kube-apiserver, etcd, kube-scheduler).
	CP *testbed.ControlPlane
	// Client is an admin client.
	Client client.Client
	// Registry holds the images; pods reference Registry.Host.
	Registry *testbed.Registry
	// Webhook is the webhook process.
	Webhook *testbed.Process
	// Nodes are the simulated nodes, in Options order.
	Nodes []experiment.NodeSpec
	// LabelerBin and WebhookBin are the binaries that run.
	LabelerBin, WebhookBin string
	// WebhookHealthAddr is the webhook's healthz/readyz address,
	// WebhookMetricsAddr its metrics address (plain HTTP).
	WebhookHealthAddr, WebhookMetricsAddr string

	configureWebhook func(*v1alpha1.WebhookConfiguration)
}

// Start builds the labeler and webhook, starts the control plane, the
// registry, the webhook and the nodes, and returns once the webhook answers
// and its inventory sees every node with its labels. ctx bounds start-up;
// the processes run until Stop.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if len(opts.Nodes) == 0 {
		return nil, errors.New("democluster: no nodes: pass Options.Nodes (experiment.PaperCluster() for the paper's)")
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	stage, err := testbed.NewStage("democluster", opts.Dir, opts.Progress)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Stage: stage, Nodes: opts.Nodes, configureWebhook: opts.ConfigureWebhook}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()

	binDir := opts.BinDir
	if binDir == "" {
		binDir = filepath.Join(c.RepoRoot, "bin")
	}
	step := c.Step("build cmd/labeler and cmd/webhook into " + binDir)
	bins, err := gobuild.Binaries(ctx, c.RepoRoot, binDir, gobuild.Options{}, "./cmd/labeler", "./cmd/webhook")
	if err != nil {
		return c, err
	}
	c.LabelerBin, c.WebhookBin = bins[0], bins[1]
	step()

	hook, err := testbed.EnvtestWebhookConfiguration(c.RepoRoot)
	if err != nil {
		return c, err
	}
	step = c.Step("start kube-apiserver, etcd and kube-scheduler (webhook configuration from " + testbed.WebhookConfigFile + ")")
	if c.CP, err = StartControlPlaneWithFlags(ctx, c.Dir, hook, opts.Flags); err != nil {
		return c, err
	}
	c.OnStop(c.CP.Stop)
	c.Client = c.CP.Client
	step()

	step = c.Step("start docker-registry (TLS, basic auth) and the webhook")
	if c.Registry, err = StartRegistry(ctx, c.Dir); err != nil {
		return c, err
	}
	c.OnStop(c.Registry.Stop)
	// The webhook starts now, while the serving port envtest picked for it
	// is likely still free; its inventory follows the nodes created below.
	if err := c.startWebhook(ctx); err != nil {
		return c, err
	}
	step()

	step = c.Step("push images")
	images := append(experiment.Images(), opts.ExtraImages...)
	images = append(images, experiment.Image{Repo: ProbeImage, Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "riscv64"},
	}})
	if err := c.push(ctx, images, opts.Parallel); err != nil {
		return c, err
	}
	step()

	step = c.Step(fmt.Sprintf("create %d Ready nodes and label each with the labeler binary", len(opts.Nodes)))
	if err := c.createNodes(ctx, opts.ExtraNodeLabels); err != nil {
		return c, err
	}
	if err := c.label(ctx, opts.Parallel); err != nil {
		return c, err
	}
	step()

	step = c.Step("wait until the webhook's inventory sees every node")
	if err := c.waitInventory(ctx); err != nil {
		return c, err
	}
	step()
	return c, nil
}

// Stop stops the webhook, the registry and the control plane, and removes
// a temporary working directory.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	return c.Stage.Stop()
}

// HostRoot is the host root the labeler probes for n.
func (c *Cluster) HostRoot(n experiment.NodeSpec) string {
	if filepath.IsAbs(n.Fixture) {
		return n.Fixture
	}
	return filepath.Join(c.RepoRoot, "pkg", "probe", "testdata", n.Fixture)
}

func (c *Cluster) push(ctx context.Context, images []experiment.Image, parallel int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, img := range images {
		g.Go(func() error {
			ps := make([]testbed.Platform, 0, len(img.Platforms))
			for _, p := range img.Platforms {
				ps = append(ps, testbed.Platform{OS: p.OS, Arch: p.Architecture, Variant: p.Variant, Labels: p.Labels})
			}
			_, err := testbed.PushIndex(ctx, c.Registry, img.Repo, img.Tag, ps)
			return err
		})
	}
	return g.Wait()
}

func (c *Cluster) createNodes(ctx context.Context, extra func(experiment.NodeSpec) map[string]string) error {
	for _, n := range c.Nodes {
		if n.Name == "" || n.Arch == "" || n.MilliCPU <= 0 || n.MemMi <= 0 {
			return fmt.Errorf("node %+v: needs Name, Arch, MilliCPU and MemMi", n)
		}
		if _, err := os.Stat(filepath.Join(c.HostRoot(n), "proc", "cpuinfo")); err != nil {
			return fmt.Errorf("node %s: host root %s has no proc/cpuinfo: %w", n.Name, c.HostRoot(n), err)
		}
		w := testbed.MakeNode(n.Name).Arch(n.Arch).
			CPU(strconv.FormatInt(n.MilliCPU, 10) + "m").Memory(strconv.FormatInt(n.MemMi, 10) + "Mi")
		if extra != nil {
			w = w.Labels(extra(n))
		}
		if err := testbed.CreateReadyNode(ctx, c.Client, w.Obj()); err != nil {
			return err
		}
	}
	return nil
}

// label runs "labeler --once" for every node against its host root and
// checks that each node then carries the labeler's architecture label.
func (c *Cluster) label(ctx context.Context, parallel int) error {
	roots := make([]string, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		roots = append(roots, c.HostRoot(n))
	}
	staged, cleanup, err := testbed.StageHostRoots(roots)
	if err != nil {
		return err
	}
	defer cleanup()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, n := range c.Nodes {
		g.Go(func() error {
			config, err := configfile.Labeler(c.Dir, func(lc *v1alpha1.LabelerConfiguration) {
				lc.HostRoot, lc.Commands.Exec = staged[c.HostRoot(n)], v1alpha1.ExecDirect
			})
			if err != nil {
				return err
			}
			cmd := exec.CommandContext(gctx, c.LabelerBin, "--once", "--node-name="+n.Name, "--config="+config,
				"--kubeconfig="+c.CP.KubeconfigPath)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("labeler --once --node-name=%s (host root %s): %w\n%s", n.Name, c.HostRoot(n), err, out)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		var node corev1.Node
		if err := c.Client.Get(ctx, client.ObjectKey{Name: n.Name}, &node); err != nil {
			return fmt.Errorf("get node %s: %w", n.Name, err)
		}
		if node.Labels[isa.ArchLabel] == "" || node.Annotations[isa.NativeISAAnnotation] == "" {
			return fmt.Errorf("node %s has no %s label or %s annotation after the labeler ran on %s",
				n.Name, isa.ArchLabel, isa.NativeISAAnnotation, c.HostRoot(n))
		}
	}
	return nil
}

// NodeISA returns the short ISA the labeler wrote on each node.
func (c *Cluster) NodeISA(ctx context.Context) (map[string]string, error) {
	var nodes corev1.NodeList
	if err := c.Client.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		out[n.Name] = n.Annotations[isa.NativeISAAnnotation]
	}
	return out, nil
}

func (c *Cluster) startWebhook(ctx context.Context) error {
	w, err := StartWebhook(ctx, WebhookOptions{
		Bin: c.WebhookBin, CP: c.CP, RegistryCA: c.Registry.CAFile, Log: filepath.Join(c.Dir, "webhook.log"),
		Configure: func(wc *v1alpha1.WebhookConfiguration) {
			// The demo registry listens on loopback, which is refused unless allowed.
			wc.Registry.AllowRegistries = []string{c.Registry.Host}
			if c.configureWebhook != nil {
				c.configureWebhook(wc)
			}
		},
	})
	c.Webhook, c.WebhookHealthAddr, c.WebhookMetricsAddr = w.Process, w.HealthAddr, w.MetricsAddr
	if w.Process != nil {
		c.OnStop(func() error { return w.Process.Stop(10 * time.Second) })
	}
	return err
}

// waitInventory admits a dry-run pod asking for every node's architecture
// (one bare-architecture alternative each, which any labelled node of that
// architecture satisfies) until the webhook's decision counts every node:
// the webhook is serving and its inventory has seen all the labels. The
// labeler writes a node's labels in one patch, so a node counted by its
// architecture is counted with all its labels. Full ISA strings would not
// do: together they exceed the webhook's limit on a request's length.
func (c *Cluster) waitInventory(ctx context.Context) error {
	if err := c.PrepareNamespace(ctx, probeNamespace); err != nil {
		return err
	}
	isas, err := c.NodeISA(ctx)
	if err != nil {
		return err
	}
	var alts []string
	for name, s := range isas {
		i, err := isa.Parse(s)
		if err != nil {
			return fmt.Errorf("node %s: its ISA annotation %q: %w", name, s, err)
		}
		if !slices.Contains(alts, string(i.Arch)) {
			alts = append(alts, string(i.Arch))
		}
	}
	slices.Sort(alts)
	want := len(c.Nodes)
	last, err := WaitDecisionCount(ctx, 250*time.Millisecond, 60*time.Second, want, func(ctx context.Context) (map[string]string, error) {
		pod := testbed.MakePod("probe", probeNamespace).Image(c.Registry.Ref(ProbeImage, "v1")).
			Annotation(isa.BareRequestAnnotation, strings.Join(alts, " | ")).Obj()
		if err := c.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			return nil, fmt.Errorf("dry-run probe pod with isa.request %q: %w", strings.Join(alts, " | "), err)
		}
		return pod.Annotations, nil
	})
	if err != nil {
		return fmt.Errorf("webhook inventory never counted all %d nodes: %w; last decision: %s\n%s", want, err, last, c.Webhook.LogTail(30))
	}
	return nil
}

// PrepareNamespace creates namespace ns if needed, the registry's pull
// secret in it and a default ServiceAccount that references the secret (no
// controller-manager runs, so nothing else creates that account).
func (c *Cluster) PrepareNamespace(ctx context.Context, ns string) error {
	return SetUpNamespace(ctx, c.Client, ns, nil, PullSecretName, c.Registry.DockerConfigJSON())
}

// Runner returns an experiment runner over the cluster's nodes and
// registry; progress may be nil.
func (c *Cluster) Runner(progress io.Writer) *experiment.Runner {
	return &experiment.Runner{
		Client:   c.Client,
		Nodes:    c.Nodes,
		Registry: c.Registry.Host,
		Progress: progress,
		Prepare:  c.PrepareNamespace,
	}
}

// LogTails returns the tails of the scheduler's and the webhook's logs, for
// failure reports; nothing for a cluster that never started.
func (c *Cluster) LogTails(n int) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	if c.CP != nil {
		b.WriteString(c.CP.SchedulerLogTail(n))
	}
	if c.Webhook != nil {
		b.WriteString(c.Webhook.LogTail(n))
	}
	return b.String()
}
