package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/isamatch/isamatch/internal/buildinfo"
	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/config/webhookconfig"
	"github.com/isamatch/isamatch/internal/configflag"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/internal/memlimit"
	"github.com/isamatch/isamatch/internal/restconfig"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// Client-side rate limit of the pull-credential reads.
const (
	keychainQPS   = 100
	keychainBurst = 200
)

// Names shared with config/webhook.
const (
	MutatePath        = "/mutate-v1-pod"
	WebhookConfigName = "isamatch"
	ServiceName       = "isamatch-webhook"
	CertSecretName    = "isamatch-webhook-cert"
	DefaultNamespace  = "isamatch-system"
	// NamespaceEnv names the variable the Deployment sets to the pod's
	// namespace (downward API, metadata.namespace): the default of the
	// namespace field, so an install under another namespace needs no
	// setting.
	NamespaceEnv = "POD_NAMESPACE"
)

// stringList is a list of the configuration.
type stringList []string

type options struct {
	// configFile is --config, configDir --config-dir.
	configDir string
	// draining is closed when the webhook is told to stop: it reports
	// not ready while it keeps serving for shutdownDelay.
	draining           <-chan struct{}
	shutdownDelay      time.Duration
	configFile         string
	kubeconfig         string
	certDir            string
	port               int
	metricsAddr        string
	probeAddr          string
	pprofAddr          string
	registryCA         string
	insecureRegistries stringList
	allowRegistries    stringList
	clusterNetworks    stringList
	perHost            int
	perNamespace       int
	maxIndexEntries    int
	maxResolution      int64
	cacheBytes         int64
	digestCacheBytes   int64
	cacheTTL           time.Duration
	budget             time.Duration
	certRotation       bool
	namespace          string
	verbosity          int
	enableHTTP2        bool
	logFormat          string
	version            bool
	clientCAFile       string
	metricsSecure      bool
	metricsAudience    string
	enforcement        string
	nsModes            []string
	resolve            string
	gateTimeout        time.Duration
	gateController     bool
	gateWorkers        int
	gateNSWorkers      int
	gateAttempt        time.Duration
	leaderElect        bool
	podEvents          bool
	// eventsQPS and eventsBurst pace the Events on decided pods, within
	// qps and burst: above them the client's limiter would hold the
	// Events, and client-go drops those queued behind a thousand.
	eventsQPS      float32
	eventsBurst    int32
	misplaceEvents bool
	evictMisplaced bool
	// evictGrace delays the first eviction after start (0: none).
	evictGrace    time.Duration
	auditInterval time.Duration
	// qps and burst limit the webhook's own requests to the API server
	// (clientConnection).
	qps                float32
	burst              int32
	pullSecrets        bool
	bareKeys           bool
	credProviderConfig string
	credProviderBinDir string
	pluginTimeout      time.Duration
	pluginRuns         int
	pluginRunsPerNS    int
	mirrors            stringList
	hostsDir           string
	inferELF           bool
	inferMaxBytes      int64
	inferTimeout       time.Duration
	fallbackArch       string
	qemuCPU            string
}

// parseArgs reads the configuration: the defaults, then the --config file,
// then the --config-dir drop-ins; the result is validated. A flag that
// was removed for a field of the file fails, naming the field.
func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	o.registerOwn(fs)
	if err := configflag.Check(fs, removedFlags, args); err != nil {
		return o, err
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: webhook takes flags only", fs.Args())
	}
	if o.version {
		return o, nil
	}
	layers, err := componentconfig.ReadLayers(o.configFile, o.configDir)
	if err != nil {
		return o, err
	}
	c, err := webhookconfig.LoadLayers(layers)
	if err != nil {
		return o, err
	}
	if err := componentconfig.Errors(webhookconfig.Validate(&c), layers); err != nil {
		return o, err
	}
	o.setConfig(&c)
	// What the checks above let through, the resolver accepts.
	if err := o.registryOptions(nil, nil).Validate(); err != nil {
		return o, err
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "webhook: %v\n", err)
		return exitUsage
	}
	if o.version {
		fmt.Fprintln(stdout, "webhook", buildinfo.Read())
		return exitOK
	}
	logger, err := logging.New(o.logFormat, o.verbosity, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "webhook: %v\n", err)
		return exitUsage
	}
	ctrl.SetLogger(logger)
	log := ctrl.Log.WithName("webhook")
	switch limit, err := memlimit.Apply(os.Getenv); {
	case err != nil:
		log.Error(err, "Soft memory limit not set; the Go runtime's defaults apply")
	case limit > 0:
		log.Info("Soft memory limit set to the container's memory request", "bytes", limit)
	}
	ctx, draining := signalContext(o.shutdownDelay)
	o.draining = draining
	if err := serve(ctx, o); err != nil {
		log.Error(err, "Webhook failed")
		return exitFail
	}
	return exitOK
}

// serve runs the webhook until ctx ends.
func serve(ctx context.Context, o options) error {
	cfg, err := restconfig.Load(o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.qps, int(o.burst)
	mgr, err := setup(cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
