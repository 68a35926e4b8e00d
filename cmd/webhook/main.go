package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/gate"
	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/registry/credprov"
	"github.com/isamatch/isamatch/pkg/registry/netguard"
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
	// namespace (downward API, metadata.namespace): the default of
	// --namespace, so an install under another namespace needs no flag.
	NamespaceEnv = "POD_NAMESPACE"
)

// Values of --qemu-cpu.
const (
	qemuCPUInject = "inject"
	qemuCPUOff    = "off"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*s = append(*s, v)
	return nil
}

type options struct {
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
	resolve            string
	gateTimeout        time.Duration
	gateController     bool
	gateWorkers        int
	gateNSWorkers      int
	gateAttempt        time.Duration
	leaderElect        bool
	podEvents          bool
	misplaceEvents     bool
	evictMisplaced     bool
	auditInterval      time.Duration
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

func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	inCluster := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory with tls.crt and tls.key (written there by the rotator with --cert-rotation)")
	fs.IntVar(&o.port, "port", 9443, "HTTPS port of the webhook")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `Prometheus metrics address ("0" disables)`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", `address of net/http/pprof's /debug/pprof/ (empty or "0": off; for profiling, never expose it)`)
	fs.StringVar(&o.registryCA, "registry-ca", "", "PEM file of extra CA certificates trusted for registries")
	fs.Var(&o.insecureRegistries, "insecure-registry", "HOST:PORT of a registry reachable over plain HTTP (repeatable; tests and labs)")
	fs.Var(&o.allowRegistries, "allow-registry", "HOST, HOST:PORT, IP or CIDR of a registry the webhook may reach at a loopback, link-local, private or CGNAT address (repeatable; --insecure-registry hosts are allowed too; every other non-public address is refused)")
	fs.Var(&o.clusterNetworks, "cluster-network", "CIDR of the cluster's pod or Service network (repeatable): the webhook never dials a registry there, even at a public address, unless --allow-registry allows it; special-purpose blocks (private, loopback, link-local, ...) and cloud metadata addresses are refused anyway")
	fs.IntVar(&o.perHost, "registry-max-per-host", registry.DefaultMaxPerHost, "registry requests in flight to one registry host")
	fs.IntVar(&o.perNamespace, "registry-max-per-namespace", registry.DefaultMaxPerNamespace, "registry requests in flight for the pods of one namespace")
	fs.IntVar(&o.maxIndexEntries, "registry-max-index-entries", registry.DefaultMaxIndexEntries, "image index entries read for one image (nested indexes included)")
	fs.Int64Var(&o.maxResolution, "registry-max-bytes", registry.DefaultMaxResolutionBytes, "registry response bytes read for one image (manifests, indexes, configs)")
	fs.Int64Var(&o.cacheBytes, "registry-cache-bytes", registry.DefaultMaxCacheBytes, "memory bound of the image cache in bytes (least recently used entries evicted)")
	fs.Int64Var(&o.digestCacheBytes, "registry-digest-cache-bytes", registry.DefaultMaxDigestCacheBytes, "memory bound in bytes of the cache of image platforms by manifest digest, shared by every namespace whose manifest HEAD succeeds (least recently used entries evicted)")
	fs.DurationVar(&o.cacheTTL, "cache-ttl", registry.DefaultTTL, "how long image platforms of a tag stay cached (digests: 24h)")
	fs.DurationVar(&o.budget, "budget", mutate.DefaultBudget, "time budget for all registry work of one admission")
	fs.BoolVar(&o.certRotation, "cert-rotation", inCluster, "generate and rotate the serving certificate in-cluster and inject the CA into the MutatingWebhookConfiguration (default true in a cluster)")
	defaultNS := DefaultNamespace
	if ns := os.Getenv(NamespaceEnv); ns != "" {
		defaultNS = ns
	}
	fs.StringVar(&o.namespace, "namespace", defaultNS, "namespace of the webhook's Service, certificate Secret and Lease (default: $"+NamespaceEnv+", which the Deployment sets from the downward API, else "+DefaultNamespace+")")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "serve the webhook over HTTP/2 too (off: HTTP/1.1 only, as kubebuilder scaffolds, for the HTTP/2 rapid-reset and stream-cancellation CVEs; the API server keeps a pool of keep-alive connections)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "PEM file of the CA that signs the API server's webhook client certificate: when set, a caller without a certificate it signed is refused in the TLS handshake (the API server sends one through its AdmissionConfiguration, see config/README.md)")
	fs.StringVar(&o.metricsAudience, "metrics-token-audience", metricsauth.DefaultAudience, "audience a scraper's bearer token must be issued for (a ServiceAccount token projected for it): an API-server token is refused, so the scraper never hands one out")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers whose token the API server authenticates and authorises for GET /metrics (false: plain HTTP to anyone, for local runs)")
	fs.StringVar(&o.enforcement, "enforcement", mutate.EnforcementDeny, `what a pod isamatch cannot place correctly gets: "deny" refuses it, "warn" admits it without isamatch's affinity, with an admission warning, a would-deny decision annotation and outcome would_deny (for rolling out)`)
	fs.StringVar(&o.resolve, "resolve", mutate.ResolveAuto, `how a pod whose image platforms must be looked up is admitted: "sync" waits for the registry (up to --budget); "auto" answers at once and, when an image is not cached, adds the scheduling gate `+isa.ResolveGate+` that the gate controller removes once it has written the affinity; "gate" does so for every pod with an image`)
	fs.DurationVar(&o.gateTimeout, "gate-timeout", gate.DefaultTimeout, "longest time a pod stays gated, from its creation: past it the gate controller releases it with what is known, with a Warning event")
	fs.IntVar(&o.gateWorkers, "gate-workers", gate.DefaultWorkers, "gated pods the gate controller decides at once")
	fs.IntVar(&o.gateNSWorkers, "gate-workers-per-namespace", 0, "of those, how many one namespace's pods may hold while waiting for their images (0: a quarter of --gate-workers, at least 1); past it a namespace's pods wait their turn")
	fs.DurationVar(&o.gateAttempt, "gate-attempt", gate.DefaultAttempt, "longest one gate-controller worker waits for a pod's images before it moves on (the lookup goes on in the background and a later attempt uses its result)")
	fs.BoolVar(&o.gateController, "gate-controller", true, "run the gate controller (on the elected leader) that resolves gated pods and releases them; off, admission still gates (for tests, or when another replica set runs it)")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "elect one replica, with a Lease in --namespace, to run the gate controller and the pod events (false: this process runs them; one replica only)")
	fs.BoolVar(&o.podEvents, "pod-events", true, "record Events on each decided pod (on the elected leader): IsamatchDecided, IsamatchImageUnresolved per image whose platforms are unknown, IsamatchNoNode when no node satisfies the pod's required affinity")
	fs.BoolVar(&o.misplaceEvents, "misplacement-events", true, "watch the scheduled pods (on the elected leader) for containers that died of SIGILL or could not start with \"exec format error\": a Warning event IsamatchMisplaced on the pod naming the node's ISA and what the pod needs, and isamatch_runtime_misplacements_total{reason}")
	fs.BoolVar(&o.evictMisplaced, "evict-misplaced", false, "evict a misplaced pod that isamatch did not decide and that a controller (not a DaemonSet) replaces, so the replacement is admitted with a decision; at most one pod per controller every 10 minutes, none in the first minute after start (needs create on pods/eviction: the kustomize component config/components/evict-misplaced)")
	fs.DurationVar(&o.auditInterval, "audit-interval", audit.DefaultInterval, "how often the elected leader audits the running pods and sets isamatch_misplaced_pods{reason}, isamatch_nodes, isamatch_isa_groups and isamatch_gated_pods_overdue (0: never)")
	fs.BoolVar(&o.bareKeys, "bare-keys", true, "also read the paper's bare keys: pod annotations isa.request and isa.qemu, pod labels ARCH and QEMU, and the image label isa.request (false where they mean something else in your manifests: only isa.isamatch.io/request, isa.isamatch.io/qemu and the image label io.isamatch.isa.request are read)")
	fs.BoolVar(&o.pullSecrets, "pull-secrets", false, "resolve images with the pod's imagePullSecrets and its ServiceAccount's, as the kubelet pulls them (needs get on secrets and serviceaccounts in every namespace: the kustomize component config/components/pull-secrets); off: registries are read anonymously")
	fs.StringVar(&o.credProviderConfig, "image-credential-provider-config", "", "the kubelet's CredentialProviderConfig (a file, or a directory of *.yaml/*.yml/*.json files): registry credentials for every pod from the image credential provider plugins it names (ecr-credential-provider, gcp-credential-provider, acr-credential-provider), asked after the pod's pull secrets; needs --image-credential-provider-bin-dir (the kustomize component config/components/credential-providers)")
	fs.StringVar(&o.credProviderBinDir, "image-credential-provider-bin-dir", "", "directory of the credential provider plugin executables that --image-credential-provider-config names (a plugin is only ever run from there)")
	fs.DurationVar(&o.pluginTimeout, "image-credential-provider-timeout", credprov.DefaultTimeout, "longest run of one credential provider plugin, in (0, 1m]: past it its process group is killed and the resolution fails with kind timeout (the kubelet allows 1m; an admission waits at most --budget, a gated pod --gate-timeout)")
	fs.IntVar(&o.pluginRuns, "image-credential-provider-max-runs", credprov.DefaultMaxRuns, "credential provider plugin processes running at once, in 1..64 (each calls its cloud's API; images on many hosts one provider matches wait their turn)")
	fs.IntVar(&o.pluginRunsPerNS, "image-credential-provider-max-runs-per-namespace", credprov.DefaultMaxRunsPerNamespace, "of those, how many the resolutions of one namespace may start, in 1..--image-credential-provider-max-runs")
	fs.Var(&o.mirrors, "registry-mirror", "REGISTRY=MIRROR: resolve the images of REGISTRY through MIRROR first (host or host:port, e.g. docker.io=mirror.local:5000), then REGISTRY itself if the mirror fails, as containerd's hosts.toml does (repeatable, one mirror per registry, at most 16; a mirror may be at a non-public address)")
	fs.StringVar(&o.hostsDir, "registry-hosts-dir", "", "directory laid out as containerd's config_path (DIR/<registry>/hosts.toml, DIR/_default/hosts.toml): resolve each registry's images through its hosts in file order, then its server, as the nodes' containerd pulls them (read at start; see docs/registries.md). A registry may not also be in --registry-mirror")
	fs.BoolVar(&o.inferELF, "infer-elf", true, "with --resolve=gate or auto, read what an image platform with no variant and no isa.request label needs from its entrypoint binary's ELF records (RISC-V .riscv.attributes, x86-64 ISA_1_NEEDED) in the gate controller, for pods that request nothing; results are cached by image digest (off: such platforms need their architecture only)")
	fs.Int64Var(&o.inferMaxBytes, "infer-elf-max-bytes", imageisa.DefaultLimits.MaxBytes, "uncompressed layer bytes read per image to find its entrypoint binary; an image needing more is treated as without inference")
	fs.DurationVar(&o.inferTimeout, "infer-elf-timeout", imageisa.DefaultLimits.Timeout, "time spent per image to find and read its entrypoint binary (within the gate's bound)")
	fs.StringVar(&o.fallbackArch, "fallback-architecture", "", "architecture (amd64, arm64 or riscv64) required of the node for a pod that asks no ISA itself and has an image whose platforms could not be resolved, at admission or when the gate controller releases it; the decision annotation and a warning say so (empty: such an image adds no constraint)")
	fs.StringVar(&o.qemuCPU, "qemu-cpu", qemuCPUInject, `"inject": set QEMU_CPU in the containers (and init containers) of a pod with isa.qemu to the value its emulating nodes record (node annotation `+isa.QEMUCPUAnnotationPrefix+`<arch>), unless a container sets its own, so the emulator runs what the node's qemu. labels say; "off": never (the emulator then runs its default CPU, which may lack extensions those labels name)`)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: webhook takes flags only", fs.Args())
	}
	if o.version {
		return o, nil
	}
	if o.enforcement != mutate.EnforcementDeny && o.enforcement != mutate.EnforcementWarn {
		return o, fmt.Errorf("--enforcement %q: want deny or warn", o.enforcement)
	}
	if o.resolve != mutate.ResolveSync && o.resolve != mutate.ResolveGate && o.resolve != mutate.ResolveAuto {
		return o, fmt.Errorf("--resolve %q: want sync, gate or auto", o.resolve)
	}
	if o.qemuCPU != qemuCPUInject && o.qemuCPU != qemuCPUOff {
		return o, fmt.Errorf("--qemu-cpu %q: want inject or off", o.qemuCPU)
	}
	if err := mutate.CheckFallback(o.fallbackArch); err != nil {
		return o, fmt.Errorf("--fallback-architecture: %w", err)
	}
	if o.gateTimeout <= 0 || o.gateTimeout > 10*time.Minute {
		return o, fmt.Errorf("--gate-timeout %v: want a duration in (0, 10m]; a gated pod waits that long at most", o.gateTimeout)
	}
	if o.gateWorkers < 1 || o.gateWorkers > 256 {
		return o, fmt.Errorf("--gate-workers %d: want 1..256", o.gateWorkers)
	}
	if o.gateNSWorkers < 0 || o.gateNSWorkers > o.gateWorkers {
		return o, fmt.Errorf("--gate-workers-per-namespace %d: want 0..%d (--gate-workers); 0 means a quarter of them", o.gateNSWorkers, o.gateWorkers)
	}
	if o.gateAttempt <= 0 || o.gateAttempt > o.gateTimeout {
		return o, fmt.Errorf("--gate-attempt %v: want a duration in (0, %v] (--gate-timeout)", o.gateAttempt, o.gateTimeout)
	}
	if o.evictMisplaced && !o.misplaceEvents {
		return o, errors.New("--evict-misplaced needs --misplacement-events: the watcher finds the pods it evicts")
	}
	if o.auditInterval < 0 || (o.auditInterval > 0 && o.auditInterval < 10*time.Second) {
		return o, fmt.Errorf("--audit-interval %v: want 0 (off) or at least 10s", o.auditInterval)
	}
	if o.inferTimeout <= 0 || o.inferTimeout > time.Minute {
		return o, fmt.Errorf("--infer-elf-timeout %v: want a duration in (0, 1m]", o.inferTimeout)
	}
	if o.port < 1 || o.port > 65535 {
		return o, fmt.Errorf("--port %d: want 1..65535", o.port)
	}
	if o.cacheTTL < 0 {
		return o, fmt.Errorf("--cache-ttl %v: want a duration >= 0 (0 disables the cache)", o.cacheTTL)
	}
	if o.budget <= 0 || o.budget > 10*time.Second {
		return o, fmt.Errorf("--budget %v: want a duration in (0, 10s]; the API server waits at most 10s", o.budget)
	}
	if o.certDir == "" {
		return o, errors.New("--cert-dir is empty: name the directory holding tls.crt and tls.key")
	}
	if o.namespace == "" {
		return o, errors.New("--namespace is empty: name the namespace of the webhook's Service")
	}
	if _, _, err := netguard.ParseAllowed(o.allowRegistries); err != nil {
		return o, fmt.Errorf("--allow-registry: %w", err)
	}
	if err := metricsauth.CheckAudience(o.metricsAudience); err != nil {
		return o, fmt.Errorf("--metrics-token-audience: %w", err)
	}
	if _, err := netguard.ParseClusterNetworks(o.clusterNetworks); err != nil {
		return o, fmt.Errorf("--cluster-network: %w", err)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"registry-max-per-host", int64(o.perHost)}, {"registry-max-per-namespace", int64(o.perNamespace)},
		{"registry-max-index-entries", int64(o.maxIndexEntries)}, {"registry-max-bytes", o.maxResolution}, {"registry-cache-bytes", o.cacheBytes},
		{"registry-digest-cache-bytes", o.digestCacheBytes},
		{"infer-elf-max-bytes", o.inferMaxBytes}} {
		if f.v < 1 {
			return o, fmt.Errorf("--%s %d: want a number >= 1", f.name, f.v)
		}
	}
	if (o.credProviderConfig == "") != (o.credProviderBinDir == "") {
		return o, errors.New("--image-credential-provider-config and --image-credential-provider-bin-dir go together: give both or neither")
	}
	if o.pluginTimeout <= 0 || o.pluginTimeout > credprov.MaxTimeout {
		return o, fmt.Errorf("--image-credential-provider-timeout %v: want a duration in (0, 1m], as the kubelet allows a plugin", o.pluginTimeout)
	}
	if o.pluginRuns < 1 || o.pluginRuns > credprov.MaxRunsLimit {
		return o, fmt.Errorf("--image-credential-provider-max-runs %d: want 1..%d", o.pluginRuns, credprov.MaxRunsLimit)
	}
	if o.pluginRunsPerNS < 1 || o.pluginRunsPerNS > o.pluginRuns {
		return o, fmt.Errorf("--image-credential-provider-max-runs-per-namespace %d: want 1..%d (--image-credential-provider-max-runs)", o.pluginRunsPerNS, o.pluginRuns)
	}
	if _, err := registry.ParseMirrors(o.mirrors); err != nil {
		return o, fmt.Errorf("--registry-mirror: %w", err)
	}
	for _, h := range o.insecureRegistries {
		if strings.Contains(h, "/") {
			return o, fmt.Errorf("--insecure-registry %q: want HOST:PORT without scheme or path", h)
		}
	}
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
	if err := serve(ctrl.SetupSignalHandler(), o); err != nil {
		log.Error(err, "Webhook failed")
		return exitFail
	}
	return exitOK
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return config.GetConfig()
}

// serve runs the webhook until ctx ends.
func serve(ctx context.Context, o options) error {
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	mgr, err := setup(cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
