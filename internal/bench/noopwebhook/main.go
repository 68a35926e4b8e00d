package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/internal/logging"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// MutatePath is cmd/webhook's path, so both are called alike.
const MutatePath = "/mutate-v1-pod"

type options struct {
	kubeconfig  string
	certDir     string
	port        int
	metricsAddr string
	probeAddr   string
	enableHTTP2 bool
	// replayPatches, when set, also serves ReplayPath with the patches
	// of this file (loadReplayer).
	replayPatches string
}

func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (required: the manager talks to the API server as cmd/webhook's does)")
	fs.StringVar(&o.certDir, "cert-dir", "", "directory with tls.crt and tls.key")
	fs.IntVar(&o.port, "port", 9443, "HTTPS port of the webhook")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `plain-HTTP Prometheus metrics address ("0" disables)`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "serve HTTP/2 too (off: HTTP/1.1 only, as cmd/webhook)")
	fs.StringVar(&o.replayPatches, "replay-patches", "", "also serve "+ReplayPath+", answering each pod with this file's JSON patch for its isa.request annotation (a JSON object of values to patches)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: noopwebhook takes flags only", fs.Args())
	}
	if o.kubeconfig == "" {
		return o, errors.New("--kubeconfig is empty: name the admin kubeconfig of the cluster")
	}
	if o.certDir == "" {
		return o, errors.New("--cert-dir is empty: name the directory holding tls.crt and tls.key")
	}
	if o.port < 1 || o.port > 65535 {
		return o, fmt.Errorf("--port %d: want 1..65535", o.port)
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("noopwebhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "noopwebhook: %v\n", err)
		return exitUsage
	}
	logger, err := logging.New(logging.FormatText, 0, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "noopwebhook: %v\n", err)
		return exitUsage
	}
	ctrl.SetLogger(logger)
	if err := serve(ctrl.SetupSignalHandler(), o); err != nil {
		ctrl.Log.Error(err, "No-op webhook failed")
		return exitFail
	}
	return exitOK
}

// allow admits every pod unchanged.
func allow(context.Context, admission.Request) admission.Response {
	return admission.Allowed("")
}

// serve runs the manager and its webhook server until ctx ends.
func serve(ctx context.Context, o options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	// cmd/webhook's serverTLSOptions: HTTP/1.1 unless HTTP/2 is asked for.
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	srv := webhook.NewServer(webhook.Options{Port: o.port, CertDir: o.certDir, TLSOpts: tlsOpts})
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.probeAddr,
		WebhookServer:          srv,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", srv.StartedChecker()); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	// The certificate is on disk already (no rotator), so the handler is
	// registered before the start; GetWebhookServer() adds the server to
	// the manager's runnables.
	mgr.GetWebhookServer().Register(MutatePath, &webhook.Admission{Handler: admission.HandlerFunc(allow)})
	a, err := newAnnotator()
	if err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(AnnotatePath, &webhook.Admission{Handler: a})
	if o.replayPatches != "" {
		r, err := loadReplayer(o.replayPatches)
		if err != nil {
			return err
		}
		mgr.GetWebhookServer().Register(ReplayPath, &webhook.Admission{Handler: r})
	}
	return mgr.Start(ctx)
}
