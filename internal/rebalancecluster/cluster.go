package rebalancecluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

// pullSecret is the registry's secret in the workload namespace.
const pullSecret = "registry"

// Node is one simulated node.
type Node struct {
	// Name is the node's name.
	Name string
	// ISA is its ISA as the labeler would probe it ("rv64imfd").
	ISA string
	// CPU is its allocatable CPU ("4").
	CPU string
	// Zone, when set, is its topology.kubernetes.io/zone label.
	Zone string
}

// Options configures Start.
type Options struct {
	// Nodes are the simulated nodes.
	Nodes []Node
	// Namespace holds the workloads: it gets the registry's pull secret,
	// and its pods are the ones whose kubelets are simulated.
	Namespace string
	// Image is the repository (relative to the registry) of the image
	// pushed with tag v1; Cluster.ImageRef names it.
	Image string
	// Platforms are the image's platforms: one means a single image,
	// more an index. Empty means riscv64 alone.
	Platforms []testbed.Platform
	// NodeAssets holds kube-controller-manager; empty means NodeAssetsDir().
	NodeAssets string
	// Dir holds binaries, logs, certificates and policies. Empty means a
	// new temporary directory, removed by Stop unless ISAMATCH_KEEP_TMP=true.
	Dir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// Cluster is a running rebalancer cluster.
type Cluster struct {
	// Stage holds the repository root (RepoRoot), the working directory
	// (Dir: binaries, logs, certificates and policies) and the parts to
	// stop.
	*testbed.Stage
	// CP is the control plane (kube-apiserver, etcd, kube-scheduler).
	CP *testbed.ControlPlane
	// Client is an admin client that can also watch.
	Client client.WithWatch
	// Registry holds the image.
	Registry *testbed.Registry
	// ControllerManager and Webhook are the kube-controller-manager and
	// cmd/webhook processes.
	ControllerManager, Webhook *testbed.Process
	// RebalancerBin is rebalance/cmd/rebalancer.
	RebalancerBin string

	image    string
	kubelets kubelets
}

// Start builds cmd/webhook and the rebalancer, starts the registry, the
// control plane, kube-controller-manager and the webhook, creates the
// nodes and the namespace, and returns once the webhook's inventory counts
// every node and the kubelets' part is played. ctx bounds start-up.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if len(o.Nodes) == 0 || o.Namespace == "" || o.Image == "" {
		return nil, errors.New("rebalancecluster: Options need Nodes, Namespace and Image")
	}
	nodeAssets := o.NodeAssets
	if nodeAssets == "" {
		if nodeAssets, err = NodeAssetsDir(); err != nil {
			return nil, err
		}
	}
	stage, err := testbed.NewStage("rebalancecluster", o.Dir, o.Progress)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Stage: stage, image: o.Image}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()

	step := c.Step("build cmd/webhook and the rebalancer (rebalance/, a module of its own)")
	webhookBins, err := gobuild.Binaries(ctx, c.RepoRoot, c.Dir, gobuild.Options{}, "./cmd/webhook")
	if err != nil {
		return c, err
	}
	rebalancerBins, err := gobuild.Binaries(ctx, filepath.Join(c.RepoRoot, "rebalance"), c.Dir, gobuild.Options{}, "./cmd/rebalancer")
	if err != nil {
		return c, err
	}
	c.RebalancerBin = rebalancerBins[0]
	step()

	platforms := o.Platforms
	if len(platforms) == 0 {
		platforms = []testbed.Platform{{Arch: "riscv64"}}
	}
	step = c.Step(fmt.Sprintf("start docker-registry and push an image for %d platform(s)", len(platforms)))
	if c.Registry, err = democluster.StartRegistry(ctx, c.Dir); err != nil {
		return c, err
	}
	c.OnStop(c.Registry.Stop)
	if len(platforms) == 1 {
		_, err = testbed.PushImage(ctx, c.Registry, o.Image, "v1", platforms[0])
	} else {
		_, err = testbed.PushIndex(ctx, c.Registry, o.Image, "v1", platforms)
	}
	if err != nil {
		return c, err
	}
	step()

	step = c.Step("start kube-apiserver, etcd, kube-scheduler and kube-controller-manager")
	if err := c.startControlPlane(ctx); err != nil {
		return c, err
	}
	if c.Client, err = client.NewWithWatch(c.CP.Config, client.Options{Scheme: c.CP.Scheme}); err != nil {
		return c, fmt.Errorf("create watch client: %w", err)
	}
	if err := c.startControllerManager(ctx, filepath.Join(nodeAssets, "kube-controller-manager")); err != nil {
		return c, err
	}
	step()

	step = c.Step(fmt.Sprintf("create %d Ready nodes with the labeler's labels and start the webhook", len(o.Nodes)))
	runnable := 0 // nodes of an architecture the image has
	for _, n := range o.Nodes {
		i, err := isa.Parse(n.ISA)
		if err != nil {
			return c, fmt.Errorf("node %s: parse ISA %q: %w", n.Name, n.ISA, err)
		}
		if slices.ContainsFunc(platforms, func(p testbed.Platform) bool { return p.Arch == string(i.Arch) }) {
			runnable++
		}
		labels := isa.NodeLabels(i, nil)
		if n.Zone != "" {
			labels[corev1.LabelTopologyZone] = n.Zone
		}
		node := testbed.MakeNode(n.Name).Arch(string(i.Arch)).CPU(n.CPU).Labels(labels).Obj()
		if err := testbed.CreateReadyNode(ctx, c.CP.Client, node); err != nil {
			return c, err
		}
	}
	if err := c.startWebhook(ctx, webhookBins[0], o.Namespace, runnable); err != nil {
		return c, err
	}
	step()

	c.kubelets.add(o.Namespace)
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		simulateKubelets(kctx, c.CP.Client, &c.kubelets)
	}()
	c.OnStop(func() error { stop(); <-done; return nil })
	return c, nil
}

func (c *Cluster) startControlPlane(ctx context.Context) error {
	hook, err := testbed.EnvtestWebhookConfiguration(c.RepoRoot)
	if err != nil {
		return err
	}
	cpDir := filepath.Join(c.Dir, "controlplane")
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return fmt.Errorf("create control plane dir: %w", err)
	}
	c.CP, err = testbed.Start(ctx, testbed.Options{
		// The scheduler's default profile, system default topology
		// spreading included, as on managed clusters.
		Scheduler: true,
		Dir:       cpDir,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			LocalServingHost: "127.0.0.1",
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hook},
		},
	})
	if c.CP != nil {
		c.OnStop(c.CP.Stop)
	}
	return err
}

// startWebhook starts the webhook binary, sets up namespace and waits up
// to a minute until a dry-run pod of the image counts nodes: the nodes of
// the image's architectures.
func (c *Cluster) startWebhook(ctx context.Context, bin, namespace string, nodes int) error {
	w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
		Bin: bin, CP: c.CP, RegistryCA: c.Registry.CAFile, Log: filepath.Join(c.Dir, "webhook.log"),
		Configure: func(wc *v1alpha1.WebhookConfiguration) {
			wc.Registry.AllowRegistries = []string{c.Registry.Host}
		},
	})
	c.Webhook = w.Process
	if w.Process != nil {
		c.OnStop(func() error { return w.Process.Stop(10 * time.Second) })
	}
	if err != nil {
		return fmt.Errorf("the webhook never became ready: %w", err)
	}
	if err := democluster.SetUpNamespace(ctx, c.CP.Client, namespace, nil, pullSecret, c.Registry.DockerConfigJSON()); err != nil {
		return err
	}
	last, err := democluster.WaitDecisionCount(ctx, 250*time.Millisecond, time.Minute, nodes, func(ctx context.Context) (map[string]string, error) {
		pod := testbed.MakePod("probe", namespace).Image(c.ImageRef()).Obj()
		if err := c.CP.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			return nil, err
		}
		return pod.Annotations, nil
	})
	if err != nil {
		return fmt.Errorf("the webhook's inventory never counted all %d nodes: %w; last decision: %s", nodes, err, last)
	}
	return nil
}

// AddNamespace creates another workload namespace, with the registry's
// pull secret, whose pods the simulated kubelets run too (a second
// tenant).
func (c *Cluster) AddNamespace(ctx context.Context, namespace string) error {
	if err := democluster.SetUpNamespace(ctx, c.CP.Client, namespace, nil, pullSecret, c.Registry.DockerConfigJSON()); err != nil {
		return err
	}
	c.kubelets.add(namespace)
	return nil
}

// ImageRef is the reference of the pushed image.
func (c *Cluster) ImageRef() string { return c.Registry.Ref(c.image, "v1") }

// Stop stops the simulated kubelets, the webhook, kube-controller-manager,
// the control plane and the registry, and removes a temporary working
// directory.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	return c.Stage.Stop()
}

// LogTails returns the tails of the scheduler's, kube-controller-manager's
// and the webhook's logs, for failure reports.
func (c *Cluster) LogTails(n int) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	if c.CP != nil {
		b.WriteString(c.CP.SchedulerLogTail(n))
	}
	for _, p := range []*testbed.Process{c.ControllerManager, c.Webhook} {
		if p != nil {
			b.WriteString(p.LogTail(n))
		}
	}
	return b.String()
}
