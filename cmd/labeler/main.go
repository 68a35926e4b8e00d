package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/labeler"
	"github.com/isamatch/isamatch/pkg/probe"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type options struct {
	nodeName       string
	hostRoot       string
	kubeconfig     string
	once           bool
	print          bool
	interval       time.Duration
	metricsAddr    string
	metricsSecure  bool
	metricsAud     string
	healthAddr     string
	execMode       string
	commandTimeout time.Duration
	execUID        uint
	execGID        uint
	maxOutput      int
	hwprobe        bool
	probePrograms  string
	emuBudget      time.Duration
	verbosity      int
	logFormat      string
	version        bool
	prune          bool
}

func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of the Node to label (default $NODE_NAME)")
	fs.StringVar(&o.hostRoot, "host-root", "/host", "the host's / mounted read-only")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.BoolVar(&o.once, "once", false, "probe, reconcile the node once and exit")
	fs.BoolVar(&o.print, "print", false, "probe only and print the labels it would set, key=value sorted (the group's domain label only with --node-name or NODE_NAME); no cluster access")
	fs.DurationVar(&o.interval, "interval", 10*time.Minute, "how often the daemon re-probes the host")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `metrics endpoint address ("0" disables)`)
	fs.StringVar(&o.metricsAud, "metrics-token-audience", metricsauth.DefaultAudience, "audience a scraper's bearer token must be issued for (a ServiceAccount token projected for it): an API-server token is refused, so a node owner cannot harvest one from the scraper")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers whose token the API server authenticates and authorises for GET /metrics (false: plain HTTP to anyone, for local runs)")
	fs.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", `healthz/readyz address ("0" disables)`)
	fs.StringVar(&o.execMode, "exec", "auto", "how host binaries run: chroot (into --host-root, needs CAP_SYS_CHROOT), direct (<host-root>/<path> as is), auto (chroot unless --host-root is /)")
	fs.DurationVar(&o.commandTimeout, "command-timeout", probe.DefaultCommandTimeout, "timeout of each host command (gcc); its whole process group is killed then")
	fs.UintVar(&o.execUID, "exec-uid", probe.NobodyID, "UID host commands run as when the labeler runs as root (needs CAP_SETUID); never 0")
	fs.UintVar(&o.execGID, "exec-gid", probe.NobodyID, "GID host commands run as when the labeler runs as root (needs CAP_SETGID); never 0")
	fs.IntVar(&o.maxOutput, "command-max-output", probe.DefaultMaxOutput, "bytes a host command may print before it is killed")
	fs.BoolVar(&o.hwprobe, "hwprobe", true, "ask the running kernel's riscv_hwprobe (linux/riscv64 builds only)")
	fs.StringVar(&o.probePrograms, "probe-programs", probe.DefaultProgramsDir, `directory of the probe programs (<arch>/<name>, shipped in the image) run through the host's QEMU binfmt_misc handlers, as --exec-uid, with --command-timeout each; "" probes no handler (no emulation labels)`)
	fs.DurationVar(&o.emuBudget, "emulation-budget", probe.DefaultEmulationBudget, "bound on probing one QEMU binfmt_misc handler (every probe program under every QEMU_CPU tried); results are remembered per interpreter file")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
	fs.BoolVar(&o.prune, "prune", false, "remove every isa.isamatch.io/ and qemu.isamatch.io/ label and annotation from every node and release every pod held by the scheduling gate isa.isamatch.io/resolve, then exit (uninstall; needs list and patch on nodes and pods, and the isamatch-node-labels policy gone or cluster-admin rights)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if o.version {
		return o, nil
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q: the labeler takes flags only", fs.Args())
	}
	if err := metricsauth.CheckAudience(o.metricsAud); err != nil {
		return options{}, fmt.Errorf("--metrics-token-audience: %w", err)
	}
	switch o.execMode {
	case "auto", "chroot", "direct":
	default:
		return options{}, fmt.Errorf("--exec=%q is not a mode: use auto, chroot or direct", o.execMode)
	}
	if o.print && o.once {
		return options{}, errors.New("--print and --once exclude each other: --print never touches the cluster")
	}
	if o.prune && (o.print || o.once) {
		return options{}, errors.New("--prune excludes --print and --once: it removes isamatch's keys from every node and probes nothing")
	}
	if o.prune {
		return o, nil
	}
	if !o.print && o.nodeName == "" {
		return options{}, errors.New("no node name: pass --node-name or set NODE_NAME (the DaemonSet sets it from spec.nodeName)")
	}
	if o.interval <= 0 {
		return options{}, fmt.Errorf("--interval=%s must be positive", o.interval)
	}
	if o.commandTimeout <= 0 {
		return options{}, fmt.Errorf("--command-timeout=%s must be positive", o.commandTimeout)
	}
	for _, id := range []struct {
		flag  string
		value uint
	}{{"exec-uid", o.execUID}, {"exec-gid", o.execGID}} {
		if id.value == 0 || id.value > math.MaxUint32-1 {
			return options{}, fmt.Errorf("--%s=%d: host commands never run as root; pass an unprivileged ID below 4294967295 (default %d, nobody)", id.flag, id.value, probe.NobodyID)
		}
	}
	if o.maxOutput <= 0 {
		return options{}, fmt.Errorf("--command-max-output=%d must be positive", o.maxOutput)
	}
	if o.emuBudget <= 0 {
		return options{}, fmt.Errorf("--emulation-budget=%s must be positive", o.emuBudget)
	}
	if o.probePrograms != "" && !filepath.IsAbs(o.probePrograms) {
		return options{}, fmt.Errorf("--probe-programs=%q must be an absolute path (the image's is %s)", o.probePrograms, probe.DefaultProgramsDir)
	}
	return o, nil
}

func main() { os.Exit(run()) }

func run() int {
	return runWith(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "labeler: %v\n", err)
		return exitUsage
	}
	if o.version {
		fmt.Fprintln(stdout, "labeler", buildinfo.Read())
		return exitOK
	}
	log, err := logging.New(o.logFormat, o.verbosity, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "labeler: %v\n", err)
		return exitUsage
	}
	ctrl.SetLogger(log)
	ctx = logr.NewContext(ctx, log)
	if o.prune {
		if err := runPrune(ctx, o, stdout); err != nil {
			fmt.Fprintf(stderr, "labeler: %v\n", err)
			return exitFail
		}
		return exitOK
	}

	var reaper *probe.Reaper
	if os.Getpid() == 1 {
		// PID 1 of the container: orphans of host commands are ours to reap.
		reaper = probe.NewReaper()
		reapCtx, stop := context.WithCancel(ctx)
		defer stop()
		go reaper.Run(reapCtx)
	}
	popts := o.probeOptions(reaper)
	if r, ok := popts.Runner.(*probe.ExecRunner); ok && r.Chroot {
		if err := probe.PrepareHostRoot(r.Root); err != nil {
			log.Info("host root not prepared: host compilers may fail to run", "hostRoot", r.Root, "err", err.Error())
		}
	}
	probeFn := func(ctx context.Context) (probe.Result, error) { return probe.Probe(ctx, popts) }

	switch {
	case o.print:
		res, err := probeFn(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "labeler: probe host root %s: %v\n", o.hostRoot, err)
			return exitFail
		}
		printLabels(stdout, isa.WithGroupDomain(res.Labels(), o.nodeName))
		return exitOK
	case o.once:
		if err := runOnce(ctx, o, probeFn); err != nil {
			fmt.Fprintf(stderr, "labeler: %v\n", err)
			return exitFail
		}
		return exitOK
	default:
		if err := runDaemon(ctx, o, probeFn, log); err != nil {
			fmt.Fprintf(stderr, "labeler: %v\n", err)
			return exitFail
		}
		return exitOK
	}
}

func (o options) probeOptions(reaper *probe.Reaper) probe.Options {
	r := probe.NewRunner(o.hostRoot, o.commandTimeout)
	switch o.execMode {
	case "chroot":
		r.Chroot = true
	case "direct":
		r.Chroot = false
	}
	if r.Credential != nil {
		r.Credential = &probe.Credential{UID: uint32(o.execUID), GID: uint32(o.execGID)}
	}
	r.MaxOutput = o.maxOutput
	r.Reaper = reaper
	po := probe.Options{HostRoot: o.hostRoot, Runner: r, CommandTimeout: o.commandTimeout}
	if o.hwprobe && probe.HWProbeAvailable {
		po.HWProbe = probe.SystemHWProbe
	}
	if o.probePrograms != "" {
		// The probe programs are the labeler's own (its image's), run
		// where they are, not chrooted: the kernel hands each to the
		// host's binfmt_misc handler, which must have the F flag to be
		// found from this container, as from every other.
		pr := &probe.ExecRunner{Root: "/", Credential: r.Credential, Timeout: o.commandTimeout, MaxOutput: o.maxOutput, Reaper: reaper}
		po.Emulator = &probe.Emulator{
			Programs: os.DirFS(o.probePrograms),
			Exec:     probe.ExecPrograms(pr, o.probePrograms),
			Budget:   o.emuBudget,
		}
	}
	return po
}

func printLabels(w io.Writer, labels map[string]string) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("find cluster config (pass --kubeconfig outside a pod): %w", err)
	}
	return cfg, nil
}

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// newClient is a direct (uncached) client for the one-shot modes.
func newClient(kubeconfig string) (client.Client, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return c, nil
}

func runOnce(ctx context.Context, o options, probeFn labeler.ProbeFunc) error {
	res, err := probeFn(ctx)
	if err != nil {
		return fmt.Errorf("probe host root %s: %w", o.hostRoot, err)
	}
	c, err := newClient(o.kubeconfig)
	if err != nil {
		return err
	}
	out, err := labeler.Reconcile(ctx, c, o.nodeName, labeler.Desired{Labels: isa.WithGroupDomain(res.Labels(), o.nodeName), Annotations: res.Annotations()})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("node %q does not exist: pass the name of an existing node with --node-name (or NODE_NAME)", o.nodeName)
	}
	if err != nil {
		return err
	}
	logr.FromContextOrDiscard(ctx).Info("node labels reconciled", "node", o.nodeName, "patched", out.Patched,
		"set", out.Set, "deleted", out.Deleted, "isa", res.Native.Short())
	return nil
}

func runDaemon(ctx context.Context, o options, probeFn labeler.ProbeFunc, log logr.Logger) error {
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsServerOptions(o.metricsAddr, o.metricsSecure, o.metricsAud),
		HealthProbeBindAddress: o.healthAddr,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			// Watch only our own Node.
			&corev1.Node{}: {Field: fields.OneTermEqualSelector("metadata.name", o.nodeName)},
		}},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add readyz check: %w", err)
	}
	m := labeler.NewMetrics()
	if err := registerMetrics(metrics.Registry, m); err != nil {
		return err
	}
	ctl := &labeler.Controller{Client: mgr.GetClient(), NodeName: o.nodeName, Probe: probeFn, Interval: o.interval,
		Recorder: mgr.GetEventRecorder("isamatch-labeler"), Metrics: m, AfterPass: debug.FreeOSMemory}
	if err := ctl.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up controller: %w", err)
	}
	log.Info("starting labeler", "node", o.nodeName, "hostRoot", o.hostRoot, "interval", o.interval, "version", buildinfo.Read().Version)
	if err := mgr.Start(signalContext(ctx)); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// signalContext ends on SIGTERM/SIGINT (ctrl.SetupSignalHandler may be
// called once per process) or when ctx ends.
func signalContext(ctx context.Context) context.Context {
	sig := ctrl.SetupSignalHandler()
	merged, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		select {
		case <-sig.Done():
		case <-merged.Done():
		}
	}()
	return merged
}
