package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// Names the benchmark cluster uses.
const (
	// WarmImage is the multi-architecture image every warm pod runs.
	WarmImage  = "bench/app"
	pullSecret = "bench-registry"
)

// warmPlatforms are WarmImage's platforms.
var warmPlatforms = []testbed.Platform{{Arch: "amd64"}, {Arch: "arm64"}, {Arch: "riscv64"}}

// Env is the running benchmark cluster.
type Env struct {
	// Stage holds the repository root (RepoRoot), the working directory
	// (Dir) and the parts to stop.
	*testbed.Stage
	CP *testbed.ControlPlane
	// Clientset is a fast client (high QPS) for the load.
	Clientset *kubernetes.Clientset
	Client    client.Client
	Registry  *testbed.Registry
	Proxy     *CountingProxy
	Webhook   *testbed.Process
	// WebhookBin, LabelerBin and NoopBin are stripped builds, as in the
	// images.
	WebhookBin, LabelerBin, NoopBin string
	// Noop is the floor: a webhook that allows every pod unchanged, behind
	// NoopConfiguration, for the namespaces of hook Noop.
	Noop *NoopWebhook
	// NoopWebhookName is its webhook name in that configuration.
	NoopWebhookName string
	// ReplayWebhookName is the webhook name of the no-op process's replay
	// path (ReplayPath) behind HookConfiguration, for the namespaces of
	// hook Replay.
	ReplayWebhookName string
	// AnnotateWebhookName is the webhook name of the no-op process's
	// annotate path (AnnotatePath), for the namespaces of hook Annotate.
	AnnotateWebhookName string
	// Mutated are the pods of the request mix as isamatch's webhook
	// admitted them (dry runs), which the replay path answers with.
	Mutated []*corev1.Pod
	// GateWebhook is a second webhook process with admission.resolve: gate behind
	// HookConfiguration, for the namespaces of hook GatePath.
	GateWebhook *testbed.Process
	// PprofAddr and MetricsAddr are the webhook's pprof and metrics
	// addresses.
	PprofAddr, MetricsAddr string
	// WebhookName and WebhookPath are the shipped configuration's webhook
	// name and service path (without its leading "/"): the series labels
	// of the API server's and the webhook's latency metrics.
	WebhookName, WebhookPath string
	// NodeNames are the Ready nodes, by name.
	NodeNames []string
	// WebhookEnv is what the shipped Deployment adds to the webhook's
	// environment (testbed.ShippedWebhookEnv), which its processes here
	// run with: its memory request as the soft memory limit.
	WebhookEnv []string

	progress         io.Writer
	webhookConfigDir string
	gatePort         int
	coldIndex        v1.ImageIndex
	coldPushed       bool
	nsMu             sync.Mutex
	nsDone           map[string]bool
}

// step prints what starts and returns a func printing how long it took.
func step(w io.Writer, what string) func() {
	start := time.Now()
	fmt.Fprintf(w, "bench: %s ...\n", what)
	return func() { fmt.Fprintf(w, "bench:   done in %.1fs\n", time.Since(start).Seconds()) }
}

// StartEnv builds the binaries, starts the control plane with the
// scheduler, the registry with its counting proxy, nodes Ready nodes in
// the groups, and the webhook, and waits until the webhook's inventory
// counts every node.
func StartEnv(ctx context.Context, o Options, nodes map[string]map[string]string) (e *Env, err error) {
	stage, err := testbed.NewStage("bench", "", o.Progress)
	if err != nil {
		return nil, err
	}
	e = &Env{Stage: stage, progress: o.Progress, webhookConfigDir: o.WebhookConfigDir, nsDone: map[string]bool{}}
	if e.progress == nil {
		e.progress = io.Discard
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
			e = nil
		}
	}()

	done := e.Step("build cmd/webhook, cmd/labeler and the no-op webhook as the images are built")
	bins, err := gobuild.Binaries(ctx, e.RepoRoot, filepath.Join(e.Dir, "bin"), gobuild.Options{AsImage: true},
		"./cmd/webhook", "./cmd/labeler", "./internal/bench/noopwebhook")
	if err != nil {
		return e, err
	}
	e.WebhookBin, e.LabelerBin, e.NoopBin = bins[0], bins[1], bins[2]
	done()

	hook, err := testbed.EnvtestWebhookConfiguration(e.RepoRoot)
	if err != nil {
		return e, err
	}
	e.WebhookName, e.WebhookPath = hook.Webhooks[0].Name, *hook.Webhooks[0].ClientConfig.Service.Path
	if e.WebhookEnv, err = testbed.ShippedWebhookEnv(e.RepoRoot); err != nil {
		return e, err
	}
	done = e.Step("start kube-apiserver, etcd and kube-scheduler")
	if e.CP, err = democluster.StartControlPlane(ctx, e.Dir, hook); err != nil {
		return e, err
	}
	e.OnStop(e.CP.Stop)
	e.Client = e.CP.Client
	fast := rest.CopyConfig(e.CP.Config)
	fast.QPS, fast.Burst = 5000, 10000
	fast.ContentType = contentTypeOrDefault(o.ContentType)
	fast.AcceptContentTypes = fast.ContentType
	// Uncompressed, as kube-controller-manager's clients, whose load these
	// stand for; and so that the bench's own pod watches cost the API
	// server no gzip of every event.
	fast.DisableCompression = true
	if e.Clientset, err = kubernetes.NewForConfig(fast); err != nil {
		return e, fmt.Errorf("create clientset: %w", err)
	}
	done()

	done = e.Step("start docker-registry (TLS, basic auth), its counting proxy, and push " + WarmImage)
	if e.Registry, err = democluster.StartRegistry(ctx, e.Dir); err != nil {
		return e, err
	}
	e.OnStop(e.Registry.Stop)
	if e.Proxy, err = StartCountingProxy(e.Registry.Host, e.Registry.Transport()); err != nil {
		return e, err
	}
	e.OnStop(e.Proxy.Stop)
	if _, err := testbed.PushIndex(ctx, e.Registry, WarmImage, "v1", warmPlatforms); err != nil {
		return e, err
	}
	done()

	done = e.Step(fmt.Sprintf("create %d Ready nodes labelled as the labeler would", len(nodes)))
	if err := e.CreateNodes(ctx, nodes, true); err != nil {
		return e, err
	}
	for n := range nodes {
		e.NodeNames = append(e.NodeNames, n)
	}
	sort.Strings(e.NodeNames)
	done()

	done = e.Step("start the webhook and wait until its inventory counts every node")
	if err := e.startWebhook(ctx, "webhook.log"); err != nil {
		return e, err
	}
	if err := e.WaitInventory(ctx, len(nodes)); err != nil {
		return e, err
	}
	done()

	done = e.Step("start the no-op webhook (with its replay of isamatch's patches and its one-annotation path) and a webhook with admission.resolve: gate, each behind a copy of the shipped configuration")
	if err := e.startNoop(ctx); err != nil {
		return e, err
	}
	if err := e.startGate(ctx); err != nil {
		return e, err
	}
	done()
	return e, nil
}

// Stop stops everything StartEnv started, the last started first, and
// removes its directory (kept when ISAMATCH_KEEP_TMP=true).
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	return e.Stage.Stop()
}

// CreateNodes creates the nodes 16 at a time; ready makes each Ready and
// untainted as testbed.CreateReadyNode does (otherwise the node is only
// created, enough for the webhook's inventory).
func (e *Env) CreateNodes(ctx context.Context, nodes map[string]map[string]string, ready bool) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for name, labels := range nodes {
		g.Go(func() error {
			n := testbed.MakeNode(name).Arch(labels[isa.KubeArchLabel]).CPU("8").Memory("32Gi").Pods(110).Labels(labels).Obj()
			if ready {
				return testbed.CreateReadyNode(ctx, e.Client, n)
			}
			if _, err := e.Clientset.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create node %s: %w", name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// startWebhook starts isamatch's webhook process (e.Webhook), logging to
// log under e.Dir.
func (e *Env) startWebhook(ctx context.Context, log string) error {
	pprofPort, err := testbed.FreePort()
	if err != nil {
		return err
	}
	e.PprofAddr = "127.0.0.1:" + strconv.Itoa(pprofPort)
	w, err := democluster.StartWebhook(ctx, democluster.WebhookOptions{
		Bin: e.WebhookBin, CP: e.CP, RegistryCA: e.Registry.CAFile, Log: filepath.Join(e.Dir, log),
		Configure: func(c *v1alpha1.WebhookConfiguration) {
			c.Registry.InsecureRegistries = []string{e.Proxy.Host}
			c.Profiling.BindAddress = e.PprofAddr
		},
		ConfigDir: e.webhookConfigDir,
		Env:       e.WebhookEnv,
	})
	e.Webhook, e.MetricsAddr = w.Process, w.MetricsAddr
	if w.Process != nil {
		e.OnStop(func() error { return w.Process.Stop(10 * time.Second) })
	}
	return err
}

// Namespace creates namespace ns once, with the proxy's pull secret on its
// default ServiceAccount, labelled so that its pods go through hook h.
func (e *Env) Namespace(ctx context.Context, ns string, h Hook) error {
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	if e.nsDone[ns] {
		return nil
	}
	reg := *e.Registry
	reg.Host = e.Proxy.Host
	if err := democluster.SetUpNamespace(ctx, e.Client, ns, namespaceLabels(h), pullSecret, reg.DockerConfigJSON()); err != nil {
		return err
	}
	e.nsDone[ns] = true
	return nil
}

// Ref is an image reference through the counting proxy.
func (e *Env) Ref(repo, tag string) string { return e.Proxy.Host + "/" + repo + ":" + tag }

// WaitInventory admits dry-run pods of the warm image (any architecture)
// until the webhook's decision counts want nodes.
func (e *Env) WaitInventory(ctx context.Context, want int) error {
	const ns = "bench-probe"
	if err := e.Namespace(ctx, ns, Isamatch); err != nil {
		return err
	}
	last, err := democluster.WaitDecisionCount(ctx, 500*time.Millisecond, 3*time.Minute, want, func(ctx context.Context) (map[string]string, error) {
		pod := testbed.MakePod("probe", ns).Image(e.Ref(WarmImage, "v1")).Obj()
		got, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, fmt.Errorf("dry-run probe pod: %w", err)
		}
		return got.Annotations, nil
	})
	if err != nil {
		return fmt.Errorf("webhook inventory never counted %d nodes: %w; last decision: %s\n%s", want, err, strings.TrimSpace(last), e.Webhook.LogTail(20))
	}
	return nil
}

// startNoop starts the no-op webhook with the serving certificate envtest
// made for isamatch's and installs it.
// Its replay path answers with the patches of isamatch's answers to the
// request mix, checked to write what isamatch wrote; its annotate path is
// checked to add its one annotation.
func (e *Env) startNoop(ctx context.Context) error {
	var err error
	if e.Mutated, err = dryRunMix(ctx, e, Isamatch); err != nil {
		return err
	}
	for i, m := range e.Mutated {
		if m.Annotations[isa.DecisionAnnotation] == "" {
			return fmt.Errorf("dry-run pod with request %q has no decision: the webhook did not mutate it", requestMix[i])
		}
	}
	replay := filepath.Join(e.Dir, "replay-patches.json")
	if err := writeReplayPatches(replay, e.Mutated); err != nil {
		return err
	}
	n, err := StartNoopWebhook(ctx, e.NoopBin, e.CP.KubeconfigPath, e.CP.Env.WebhookInstallOptions.LocalServingCertDir, filepath.Join(e.Dir, "noopwebhook.log"), replay)
	if err != nil {
		return err
	}
	e.Noop = n
	e.OnStop(func() error { return n.Process.Stop(10 * time.Second) })
	if e.NoopWebhookName, err = e.installHook(ctx, Noop, n.URL("/"+e.WebhookPath), n.MetricsAddr, n.Process); err != nil {
		return err
	}
	if e.ReplayWebhookName, err = e.installHook(ctx, Replay, n.URL(ReplayPath), n.MetricsAddr, n.Process); err != nil {
		return err
	}
	got, err := dryRunMix(ctx, e, Replay)
	if err != nil {
		return err
	}
	for i := range got {
		if d := sameWrites(e.Mutated[i], got[i]); d != "" {
			return fmt.Errorf("the replay webhook does not write what isamatch wrote for request %q: %s", requestMix[i], d)
		}
	}
	if e.AnnotateWebhookName, err = e.installHook(ctx, Annotate, n.URL(AnnotatePath), n.MetricsAddr, n.Process); err != nil {
		return err
	}
	return checkAnnotate(ctx, e)
}

// startGate starts the webhook binary once more, with admission.resolve: gate and
// its own gate controller (no leader election: the other process runs
// none with --resolve=sync), on another port, and installs it.
func (e *Env) startGate(ctx context.Context) error {
	var w democluster.Webhook
	err := testbed.StartOnFreePorts(1, func(ports []int) error {
		var err error
		w, err = democluster.StartWebhook(ctx, democluster.WebhookOptions{
			Bin: e.WebhookBin, CP: e.CP, RegistryCA: e.Registry.CAFile, Log: filepath.Join(e.Dir, "webhook-gate.log"),
			Configure: func(c *v1alpha1.WebhookConfiguration) {
				c.Registry.InsecureRegistries = []string{e.Proxy.Host}
				c.Server.Port = ports[0]
				c.Admission.Resolve, c.LeaderElection.Enabled = mutate.ResolveGate, false
				// The first process (the elected leader) records the
				// Events of every decided pod; this one would repeat them.
				c.Events.Pods = false
			},
			Env: e.WebhookEnv,
		})
		if err != nil && w.Process != nil {
			_ = w.Process.Stop(10 * time.Second)
			w.Process = nil
		}
		if err == nil {
			e.gatePort = ports[0]
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("start the webhook with admission.resolve: gate: %w", err)
	}
	e.GateWebhook = w.Process
	e.OnStop(func() error { return w.Process.Stop(10 * time.Second) })
	url := "https://127.0.0.1:" + strconv.Itoa(e.gatePort) + "/" + e.WebhookPath
	_, err = e.installHook(ctx, GatePath, url, w.MetricsAddr, w.Process)
	return err
}

// installHook creates HookConfiguration for hook h calling url, with
// envtest's CA, and waits until the API server calls it (the webhook's
// controller-runtime metrics at metricsAddr count a request). It returns
// the configuration's webhook name.
func (e *Env) installHook(ctx context.Context, h Hook, url, metricsAddr string, p *testbed.Process) (string, error) {
	shipped, err := testbed.ShippedWebhookConfiguration(e.RepoRoot)
	if err != nil {
		return "", err
	}
	u, err := neturl.Parse(url)
	if err != nil {
		return "", fmt.Errorf("the %s webhook's URL %q: %w", h, url, err)
	}
	path := u.Path
	cfg := HookConfiguration(shipped, h, url, e.CP.Env.WebhookInstallOptions.LocalServingCAData)
	if err := e.Client.Create(ctx, cfg); err != nil {
		return "", fmt.Errorf("create the %s webhook's configuration: %w", h, err)
	}
	ns := "bench-probe-" + string(h)
	if err := e.Namespace(ctx, ns, h); err != nil {
		return "", err
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pod := testbed.MakePod("probe", ns).Image(e.Ref(WarmImage, "v1")).Obj()
		if _, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return false, fmt.Errorf("dry-run probe pod: %w", err)
		}
		calls, err := webhookRequests(ctx, metricsAddr, path)
		return calls > 0, err
	})
	if err != nil {
		return "", fmt.Errorf("the API server never called the %s webhook: %w\n%s", h, err, p.LogTail(20))
	}
	return cfg.Webhooks[0].Name, nil
}
