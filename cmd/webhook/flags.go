package main

import (
	"flag"
	"os"

	"github.com/isamatch/isamatch/internal/configflag"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// registerOwn registers the flags that are not in the configuration file:
// the file itself, the kubeconfig, logging and --version.
func (o *options) registerOwn(fs *flag.FlagSet) {
	fs.StringVar(&o.configFile, "config", "", "the WebhookConfiguration file (config.isamatch.io/v1alpha1, docs/configuration.md); flags given on the command line override its fields")
	fs.StringVar(&o.configDir, "config-dir", "", "a directory of drop-in WebhookConfiguration files (*.yaml, *.yml, *.json), each read in name order over --config and the ones before it: the fields a drop-in names replace theirs (a list whole), as the kubelet's --config-dir; flags given on the command line override them all")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
}

// bindFlags registers the deprecated flags, each bound to its field of c
// with c's value as its default.
func bindFlags(f *configflag.Flags, c *v1alpha1.WebhookConfiguration) {
	inCluster := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	s := &c.Server
	f.String(&s.CertDir, "cert-dir", "server.certDir", "directory with tls.crt and tls.key (written there by the rotator with --cert-rotation)")
	f.Int(&s.Port, "port", "server.port", "HTTPS port of the webhook")
	f.OptionalBool(&s.CertRotation, inCluster, "cert-rotation", "server.certRotation", "generate and rotate the serving certificate in-cluster and inject the CA into the MutatingWebhookConfiguration (default true in a cluster)")
	f.Duration(&s.ShutdownDelay, "shutdown-delay", "server.shutdownDelay", "keep serving this long after SIGTERM, reporting not ready, while the endpoint leaves the Service (0: stop at once)")
	f.Bool(&s.EnableHTTP2, "enable-http2", "server.enableHTTP2", "serve the webhook over HTTP/2 too (off: HTTP/1.1 only, as kubebuilder scaffolds, for the HTTP/2 rapid-reset and stream-cancellation CVEs; the API server keeps a pool of keep-alive connections)")
	f.String(&s.ClientCAFile, "client-ca-file", "server.clientCAFile", "PEM file of the CA that signs the API server's webhook client certificate: when set, a caller without a certificate it signed is refused in the TLS handshake (the API server sends one through its AdmissionConfiguration, see config/README.md)")
	f.String(&c.Namespace, "namespace", "namespace", "namespace of the webhook's Service, certificate Secret and Lease (default: $"+NamespaceEnv+", which the Deployment sets from the downward API, else "+DefaultNamespace+")")

	f.String(&c.Metrics.BindAddress, "metrics-bind-address", "metrics.bindAddress", `Prometheus metrics address ("0" disables)`)
	f.String(&c.Metrics.TokenAudience, "metrics-token-audience", "metrics.tokenAudience", "audience a scraper's bearer token must be issued for (a ServiceAccount token projected for it): an API-server token is refused, so the scraper never hands one out")
	f.Bool(&c.Metrics.Secure, "metrics-secure", "metrics.secure", "serve metrics over HTTPS to callers whose token the API server authenticates and authorises for GET /metrics (false: plain HTTP to anyone, for local runs)")
	f.String(&c.Health.BindAddress, "health-probe-bind-address", "health.bindAddress", "address of /healthz and /readyz")
	f.String(&c.Profiling.BindAddress, "pprof-bind-address", "profiling.bindAddress", `address of net/http/pprof's /debug/pprof/ (empty or "0": off; for profiling, never expose it)`)

	r := &c.Registry
	f.String(&r.CAFile, "registry-ca", "registry.caFile", "PEM file of extra CA certificates trusted for registries")
	f.List(&r.InsecureRegistries, "insecure-registry", "registry.insecureRegistries", "HOST:PORT of a registry reachable over plain HTTP (repeatable; tests and labs)")
	f.List(&r.AllowRegistries, "allow-registry", "registry.allowRegistries", "HOST, HOST:PORT, IP or CIDR of a registry the webhook may reach at a loopback, link-local, private or CGNAT address (repeatable; --insecure-registry hosts are allowed too; every other non-public address is refused)")
	f.List(&r.ClusterNetworks, "cluster-network", "registry.clusterNetworks", "CIDR of the cluster's pod or Service network (repeatable): the webhook never dials a registry there, even at a public address, unless --allow-registry allows it; special-purpose blocks (private, loopback, link-local, ...) and cloud metadata addresses are refused anyway")
	f.Int(&r.MaxPerHost, "registry-max-per-host", "registry.maxPerHost", "registry requests in flight to one registry host")
	f.Int(&r.MaxPerNamespace, "registry-max-per-namespace", "registry.maxPerNamespace", "registry requests in flight for the pods of one namespace")
	f.Int(&r.MaxIndexEntries, "registry-max-index-entries", "registry.maxIndexEntries", "image index entries read for one image (nested indexes included)")
	f.Int64(&r.MaxBytes, "registry-max-bytes", "registry.maxBytes", "registry response bytes read for one image (manifests, indexes, configs)")
	f.Int64(&r.CacheBytes, "registry-cache-bytes", "registry.cacheBytes", "memory bound of the image cache in bytes (least recently used entries evicted)")
	f.Int64(&r.DigestCacheBytes, "registry-digest-cache-bytes", "registry.digestCacheBytes", "memory bound in bytes of the cache of image platforms by manifest digest, shared by every namespace whose manifest HEAD succeeds (least recently used entries evicted)")
	f.Duration(&r.CacheTTL, "cache-ttl", "registry.cacheTTL", "how long image platforms of a tag stay cached (digests: 24h)")
	f.Bool(&r.PullSecrets, "pull-secrets", "registry.pullSecrets", "resolve images with the pod's imagePullSecrets and its ServiceAccount's, as the kubelet pulls them (needs get on secrets and serviceaccounts in every namespace: the kustomize component config/components/pull-secrets); off: registries are read anonymously")
	f.List(&r.Mirrors, "registry-mirror", "registry.mirrors", "REGISTRY=MIRROR: resolve the images of REGISTRY through MIRROR first (host or host:port, e.g. docker.io=mirror.local:5000), then REGISTRY itself if the mirror fails, as containerd's hosts.toml does (repeatable, one mirror per registry, at most 16; a mirror may be at a non-public address)")
	f.String(&r.HostsDir, "registry-hosts-dir", "registry.hostsDir", "directory laid out as containerd's config_path (DIR/<registry>/hosts.toml, DIR/_default/hosts.toml): resolve each registry's images through its hosts in file order, then its server, as the nodes' containerd pulls them (read at start; see docs/registries.md). A registry may not also be in --registry-mirror")

	cp := &c.CredentialProviders
	f.String(&cp.Config, "image-credential-provider-config", "credentialProviders.config", "the kubelet's CredentialProviderConfig (a file, or a directory of *.yaml/*.yml/*.json files): registry credentials for every pod from the image credential provider plugins it names (ecr-credential-provider, gcp-credential-provider, acr-credential-provider), asked after the pod's pull secrets; needs --image-credential-provider-bin-dir (the kustomize component config/components/credential-providers)")
	f.String(&cp.BinDir, "image-credential-provider-bin-dir", "credentialProviders.binDir", "directory of the credential provider plugin executables that --image-credential-provider-config names (a plugin is only ever run from there)")
	f.Duration(&cp.Timeout, "image-credential-provider-timeout", "credentialProviders.timeout", "longest run of one credential provider plugin, in (0, 1m]: past it its process group is killed and the resolution fails with kind timeout (the kubelet allows 1m; an admission waits at most --budget, a gated pod --gate-timeout)")
	f.Int(&cp.MaxRuns, "image-credential-provider-max-runs", "credentialProviders.maxRuns", "credential provider plugin processes running at once, in 1..64 (each calls its cloud's API; images on many hosts one provider matches wait their turn)")
	f.Int(&cp.MaxRunsPerNamespace, "image-credential-provider-max-runs-per-namespace", "credentialProviders.maxRunsPerNamespace", "of those, how many the resolutions of one namespace may start, in 1..--image-credential-provider-max-runs")

	a := &c.Admission
	f.Duration(&a.Budget, "budget", "admission.budget", "time budget for all registry work of one admission")
	f.String(&a.Enforcement, "enforcement", "admission.enforcement", `what a pod isamatch cannot place correctly gets: "deny" refuses it, "warn" admits it without isamatch's affinity, with an admission warning, a would-deny decision annotation and outcome would_deny (for rolling out)`)
	f.List(&a.NamespaceEnforcement, "namespace-enforcement", "admission.namespaceEnforcement", `the modes a namespace may choose for its own pods with the label `+isa.EnforcementLabel+` (deny and/or warn, comma-separated or repeated; "none": namespaces cannot choose, --enforcement holds everywhere); a label value not listed is ignored`)
	f.String(&a.Resolve, "resolve", "admission.resolve", `how a pod whose image platforms must be looked up is admitted: "sync" waits for the registry (up to --budget); "auto" answers at once and, when an image is not cached, adds the scheduling gate `+isa.ResolveGate+` that the gate controller removes once it has written the affinity; "gate" does so for every pod with an image`)
	f.Bool(&a.BareKeys, "bare-keys", "admission.bareKeys", "also read the paper's bare keys: pod annotations isa.request and isa.qemu, pod labels ARCH and QEMU, and the image label isa.request (false where they mean something else in your manifests: only isa.isamatch.io/request, isa.isamatch.io/qemu and the image label io.isamatch.isa.request are read)")
	f.String(&a.FallbackArchitecture, "fallback-architecture", "admission.fallbackArchitecture", "architecture (amd64, arm64 or riscv64) required of the node for a pod that asks no ISA itself and has an image whose platforms could not be resolved, at admission or when the gate controller releases it; the decision annotation and a warning say so (empty: such an image adds no constraint)")
	f.String(&a.QEMUCPU, "qemu-cpu", "admission.qemuCPU", `"inject": set QEMU_CPU in the containers (and init containers) of a pod with isa.qemu to the value its emulating nodes record (node annotation `+isa.QEMUCPUAnnotationPrefix+`<arch>), unless a container sets its own, so the emulator runs what the node's qemu. labels say; "off": never (the emulator then runs its default CPU, which may lack extensions those labels name)`)

	g := &c.Gate
	f.Duration(&g.Timeout, "gate-timeout", "gate.timeout", "longest time a pod stays gated, from its creation: past it the gate controller releases it with what is known, with a Warning event")
	f.Int(&g.Workers, "gate-workers", "gate.workers", "gated pods the gate controller decides at once")
	f.Int(&g.WorkersPerNamespace, "gate-workers-per-namespace", "gate.workersPerNamespace", "of those, how many one namespace's pods may hold while waiting for their images (0: a quarter of --gate-workers, at least 1); past it a namespace's pods wait their turn")
	f.Duration(&g.Attempt, "gate-attempt", "gate.attempt", "longest one gate-controller worker waits for a pod's images before it moves on (the lookup goes on in the background and a later attempt uses its result)")
	f.Bool(&g.Controller, "gate-controller", "gate.controller", "run the gate controller (on the elected leader) that resolves gated pods and releases them; off, admission still gates (for tests, or when another replica set runs it)")

	f.Bool(&c.LeaderElection.Enabled, "leader-elect", "leaderElection.enabled", "elect one replica, with a Lease in --namespace, to run the gate controller and the pod events (false: this process runs them; one replica only)")
	f.Bool(&c.Events.Pods, "pod-events", "events.pods", "record Events on each decided pod (on the elected leader): IsamatchDecided, IsamatchImageUnresolved per image whose platforms are unknown, IsamatchNoNode when no node satisfies the pod's required affinity")
	f.Bool(&c.Misplacement.Events, "misplacement-events", "misplacement.events", "watch the scheduled pods (on the elected leader) for containers that died of SIGILL or could not start with \"exec format error\": a Warning event IsamatchMisplaced on the pod naming the node's ISA and what the pod needs, and isamatch_runtime_misplacements_total{reason}")
	f.Bool(&c.Misplacement.Evict, "evict-misplaced", "misplacement.evict", "evict a misplaced pod that isamatch did not decide and that a controller (not a DaemonSet) replaces, so the replacement is admitted with a decision; at most one pod per controller every 10 minutes, none in the first minute after start (needs create on pods/eviction: the kustomize component config/components/evict-misplaced)")
	f.Duration(&c.Audit.Interval, "audit-interval", "audit.interval", "how often the elected leader audits the running pods and sets isamatch_misplaced_pods{reason}, isamatch_nodes, isamatch_isa_groups and isamatch_gated_pods_overdue (0: never)")

	in := &c.Inference
	f.Bool(&in.ELF, "infer-elf", "inference.elf", "with --resolve=gate or auto, read what an image platform with no variant and no isa.request label needs from its entrypoint binary's ELF records (RISC-V .riscv.attributes, x86-64 ISA_1_NEEDED) in the gate controller, for pods that request nothing; results are cached by image digest (off: such platforms need their architecture only)")
	f.Int64(&in.MaxBytes, "infer-elf-max-bytes", "inference.maxBytes", "uncompressed layer bytes read per image to find its entrypoint binary; an image needing more is treated as without inference")
	f.Duration(&in.Timeout, "infer-elf-timeout", "inference.timeout", "time spent per image to find and read its entrypoint binary (within the gate's bound)")
}

// setConfig copies a validated configuration into o, resolving what the
// file leaves to the environment: the namespace ($POD_NAMESPACE) and the
// certificate rotation (on in a cluster).
func (o *options) setConfig(c *v1alpha1.WebhookConfiguration) {
	o.namespace = c.Namespace
	if o.namespace == "" {
		o.namespace = DefaultNamespace
		if ns := os.Getenv(NamespaceEnv); ns != "" {
			o.namespace = ns
		}
	}
	o.certRotation = os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	if c.Server.CertRotation != nil {
		o.certRotation = *c.Server.CertRotation
	}
	o.certDir, o.port, o.enableHTTP2, o.clientCAFile = c.Server.CertDir, c.Server.Port, c.Server.EnableHTTP2, c.Server.ClientCAFile
	o.shutdownDelay = c.Server.ShutdownDelay.Duration
	o.metricsAddr, o.metricsSecure, o.metricsAudience = c.Metrics.BindAddress, c.Metrics.Secure, c.Metrics.TokenAudience
	o.probeAddr, o.pprofAddr = c.Health.BindAddress, c.Profiling.BindAddress

	r := &c.Registry
	o.registryCA, o.pullSecrets = r.CAFile, r.PullSecrets
	o.insecureRegistries, o.allowRegistries = stringList(r.InsecureRegistries), stringList(r.AllowRegistries)
	o.clusterNetworks, o.mirrors = stringList(r.ClusterNetworks), stringList(r.Mirrors)
	o.hostsDir = r.HostsDir
	o.perHost, o.perNamespace, o.maxIndexEntries = r.MaxPerHost, r.MaxPerNamespace, r.MaxIndexEntries
	o.maxResolution, o.cacheBytes, o.digestCacheBytes, o.cacheTTL = r.MaxBytes, r.CacheBytes, r.DigestCacheBytes, r.CacheTTL.Duration

	cp := &c.CredentialProviders
	o.credProviderConfig, o.credProviderBinDir, o.pluginTimeout = cp.Config, cp.BinDir, cp.Timeout.Duration
	o.pluginRuns, o.pluginRunsPerNS = cp.MaxRuns, cp.MaxRunsPerNamespace

	a := &c.Admission
	o.budget, o.enforcement, o.resolve = a.Budget.Duration, a.Enforcement, a.Resolve
	o.nsModes, _ = mutate.ParseNamespaceModes(a.NamespaceEnforcement) // validated with the rest
	o.bareKeys, o.fallbackArch, o.qemuCPU = a.BareKeys, a.FallbackArchitecture, a.QEMUCPU

	g := &c.Gate
	o.gateTimeout, o.gateWorkers, o.gateNSWorkers = g.Timeout.Duration, g.Workers, g.WorkersPerNamespace
	o.gateAttempt, o.gateController = g.Attempt.Duration, g.Controller

	o.leaderElect, o.podEvents = c.LeaderElection.Enabled, c.Events.Pods
	o.misplaceEvents, o.evictMisplaced, o.auditInterval = c.Misplacement.Events, c.Misplacement.Evict, c.Audit.Interval.Duration
	o.inferELF, o.inferMaxBytes, o.inferTimeout = c.Inference.ELF, c.Inference.MaxBytes, c.Inference.Timeout.Duration
}
