package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/isamatch/isamatch/internal/buildinfo"
	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/configflag"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/internal/restconfig"
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
	// configFile is --config, configDir --config-dir.
	configDir      string
	configFile     string
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

// parseArgs reads the configuration: the defaults, then the --config file,
// then the --config-dir drop-ins; the result is validated. A flag that
// was removed for a field of the file fails, naming the field.
func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	c := componentconfig.DefaultLabeler()
	o.registerOwn(fs)
	if err := configflag.Check(fs, removedFlags, args); err != nil {
		return options{}, err
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if o.version {
		o.setConfig(&c)
		return o, nil
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q: the labeler takes flags only", fs.Args())
	}
	layers, err := componentconfig.ReadLayers(o.configFile, o.configDir)
	if err != nil {
		return options{}, err
	}
	if c, err = componentconfig.LoadLabelerLayers(layers); err != nil {
		return options{}, err
	}
	if err := componentconfig.Errors(componentconfig.ValidateLabeler(&c), layers); err != nil {
		return options{}, err
	}
	o.setConfig(&c)
	if o.print && o.once {
		return options{}, errors.New("--print and --once exclude each other: --print never touches the cluster")
	}
	if o.prune && (o.print || o.once) {
		return options{}, errors.New("--prune excludes --print and --once: it removes isamatch's keys from every node and probes nothing")
	}
	if !o.prune && !o.print && o.nodeName == "" {
		return options{}, errors.New("no node name: pass --node-name or set NODE_NAME (the DaemonSet sets it from spec.nodeName)")
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

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// newClient is a direct (uncached) client for the one-shot modes.
func newClient(kubeconfig string) (client.Client, error) {
	cfg, err := restconfig.Load(kubeconfig)
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
	cfg, err := restconfig.Load(o.kubeconfig)
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
