package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Values of Admission.QEMUCPU.
const (
	QEMUCPUInject = "inject"
	QEMUCPUOff    = "off"
)

// WebhookConfiguration configures cmd/webhook, the mutating admission
// webhook that turns a pod's ISA request and image platforms into node
// affinity. Every field is optional: an absent one keeps its default
// (webhookconfig.Default in internal/config/webhookconfig).
type WebhookConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Namespace of the webhook's Service, certificate Secret and Lease.
	// Empty: $POD_NAMESPACE (the Deployment sets it from the downward API),
	// else isamatch-system.
	Namespace string `json:"namespace,omitempty"`

	// Server is the HTTPS server the API server calls.
	Server WebhookServer `json:"server"`
	// Metrics is the Prometheus endpoint.
	Metrics Metrics `json:"metrics"`
	// Health is the endpoint of /healthz and /readyz.
	Health Health `json:"health"`
	// Profiling is net/http/pprof's endpoint.
	Profiling Profiling `json:"profiling"`
	// Admission is how a pod is decided when it is admitted.
	Admission Admission `json:"admission"`
	// Registry is how image platforms are read from registries.
	Registry Registry `json:"registry"`
	// CredentialProviders are the kubelet's image credential provider
	// plugins, run for registry credentials.
	CredentialProviders CredentialProviders `json:"credentialProviders"`
	// Gate is the scheduling gate and the controller that releases it.
	Gate Gate `json:"gate"`
	// Inference reads what an image needs from its entrypoint binary.
	Inference Inference `json:"inference"`
	// LeaderElection elects the replica that runs the gate controller,
	// the events, the misplacement watcher and the audit.
	LeaderElection LeaderElection `json:"leaderElection"`
	// Events are the Events recorded on decided pods.
	Events Events `json:"events"`
	// Misplacement is the watch for pods that run on a node of the wrong
	// ISA.
	Misplacement Misplacement `json:"misplacement"`
	// Audit is the periodic audit of the running pods.
	Audit Audit `json:"audit"`
	// ClientConnection is the webhook's connection to the API server.
	ClientConnection ClientConnection `json:"clientConnection"`
}

// ClientConnection is the client-side rate limit of the webhook's own
// requests to the API server: the gate's releases, the Events, the
// misplacement remedy, its Lease and what it reads outside its caches.
// The API server's priority and fairness still apply. As in
// kube-scheduler's and Kueue's clientConnection.
type ClientConnection struct {
	// QPS is the sustained rate, requests per second, in (0, 1000].
	QPS float32 `json:"qps"`
	// Burst is how many requests may go at once above it, in 1..2000.
	Burst int32 `json:"burst"`
}

// WebhookServer is the webhook's HTTPS server.
type WebhookServer struct {
	// Port is the HTTPS port, 1..65535.
	Port int `json:"port"`
	// CertDir is the directory with tls.crt and tls.key (written there by
	// the rotator when CertRotation is on).
	CertDir string `json:"certDir"`
	// CertRotation generates and rotates the serving certificate in-cluster
	// and injects the CA into the MutatingWebhookConfiguration. Unset: on
	// in a cluster, off outside one.
	CertRotation *bool `json:"certRotation,omitempty"`
	// ClientCAFile is a PEM file of the CA that signs the API server's
	// webhook client certificate: when set, a caller without a certificate
	// it signed is refused in the TLS handshake.
	ClientCAFile string `json:"clientCAFile,omitempty"`
	// EnableHTTP2 serves HTTP/2 too (off: HTTP/1.1 only, against the
	// HTTP/2 rapid-reset and stream-cancellation CVEs).
	EnableHTTP2 bool `json:"enableHTTP2"`
	// ShutdownDelay is how long the webhook keeps serving after SIGTERM,
	// reporting itself not ready, while its endpoint leaves the Service,
	// 0..1m (0: it stops at once). The shipped file says 10s.
	ShutdownDelay metav1.Duration `json:"shutdownDelay"`
}

// Metrics is a Prometheus endpoint.
type Metrics struct {
	// BindAddress is the metrics address ("0" disables).
	BindAddress string `json:"bindAddress"`
	// Secure serves metrics over HTTPS to callers whose token the API
	// server authenticates and authorises for GET /metrics (false: plain
	// HTTP to anyone, for local runs).
	Secure bool `json:"secure"`
	// TokenAudience is the audience a scraper's bearer token must be
	// issued for: an API-server token is refused.
	TokenAudience string `json:"tokenAudience"`
}

// Health is the endpoint of /healthz and /readyz.
type Health struct {
	// BindAddress is its address ("0" disables).
	BindAddress string `json:"bindAddress"`
}

// Profiling is net/http/pprof's endpoint.
type Profiling struct {
	// BindAddress is the address of /debug/pprof/ (empty or "0": off;
	// never expose it).
	BindAddress string `json:"bindAddress,omitempty"`
}

// Admission is how a pod is decided.
type Admission struct {
	// Enforcement is what a pod isamatch cannot place correctly gets:
	// "deny" refuses it; "warn" admits it without isamatch's affinity, with
	// a warning and a would-deny decision (for rolling out).
	Enforcement string `json:"enforcement"`
	// NamespaceEnforcement are the modes (deny, warn) a namespace may
	// choose for its own pods with the label isa.isamatch.io/enforcement,
	// in place of Enforcement; a label value not listed is ignored. Empty
	// (or [none]): namespaces cannot choose, Enforcement holds everywhere.
	NamespaceEnforcement []string `json:"namespaceEnforcement"`
	// Resolve is how a pod whose image platforms must be looked up is
	// admitted: "sync" waits for the registry (up to Budget); "auto"
	// answers at once and gates the pod when an image is not cached;
	// "gate" gates every pod with an image.
	Resolve string `json:"resolve"`
	// Budget is the time for all registry work of one admission, in
	// (0, 10s].
	Budget metav1.Duration `json:"budget"`
	// BareKeys also reads the bare keys: pod annotations isa.request and
	// isa.qemu, pod labels ARCH and QEMU, and the image label isa.request.
	BareKeys bool `json:"bareKeys"`
	// FallbackArchitecture (amd64, arm64 or riscv64) is required of the
	// node for a pod that asks no ISA itself and has an image whose
	// platforms could not be resolved (empty: no constraint).
	FallbackArchitecture string `json:"fallbackArchitecture,omitempty"`
	// QEMUCPU is "inject" (set QEMU_CPU in the containers of a pod with
	// isa.qemu to what its emulating nodes record, unless a container sets
	// its own) or "off".
	QEMUCPU string `json:"qemuCPU"`
}

// Registry is how image platforms are read.
type Registry struct {
	// CAFile is a PEM file of extra CA certificates trusted for registries.
	CAFile string `json:"caFile,omitempty"`
	// InsecureRegistries are HOST:PORT of registries reachable over plain
	// HTTP (tests and labs).
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
	// AllowRegistries are HOST, HOST:PORT, IP or CIDR of registries the
	// webhook may reach at a loopback, link-local, private or CGNAT
	// address (insecure registries are allowed too; every other
	// non-public address is refused).
	AllowRegistries []string `json:"allowRegistries,omitempty"`
	// ClusterNetworks are CIDRs of the cluster's pod and Service networks:
	// never dialled, even at a public address, unless allowed.
	ClusterNetworks []string `json:"clusterNetworks,omitempty"`
	// Mirrors are REGISTRY=MIRROR: the images of REGISTRY are resolved
	// through MIRROR first, then REGISTRY itself (one mirror per registry,
	// at most 16).
	Mirrors []string `json:"mirrors,omitempty"`
	// HostsDir is a directory laid out as containerd's config_path
	// (DIR/<registry>/hosts.toml, DIR/_default/hosts.toml): each
	// registry's images are resolved through its hosts in file order, then
	// its server (docs/registries.md). A registry may not also be in
	// Mirrors.
	HostsDir string `json:"hostsDir,omitempty"`
	// PullSecrets resolves images with the pod's imagePullSecrets and its
	// ServiceAccount's (needs get on secrets and serviceaccounts in every
	// namespace); off: registries are read anonymously.
	PullSecrets bool `json:"pullSecrets"`
	// MaxPerHost is the requests in flight to one registry host.
	MaxPerHost int `json:"maxPerHost"`
	// MaxPerNamespace is the requests in flight for the pods of one
	// namespace.
	MaxPerNamespace int `json:"maxPerNamespace"`
	// MaxIndexEntries is the image index entries read for one image.
	MaxIndexEntries int `json:"maxIndexEntries"`
	// MaxBytes is the response bytes read for one image.
	MaxBytes int64 `json:"maxBytes"`
	// CacheBytes bounds the image cache (least recently used evicted).
	CacheBytes int64 `json:"cacheBytes"`
	// DigestCacheBytes bounds the cache of image platforms by manifest
	// digest, shared by every namespace.
	DigestCacheBytes int64 `json:"digestCacheBytes"`
	// CacheTTL is how long the platforms of a tag stay cached (0 disables
	// the cache; digests: 24h).
	CacheTTL metav1.Duration `json:"cacheTTL"`
}

// CredentialProviders are the kubelet's image credential provider plugins.
type CredentialProviders struct {
	// Config is the kubelet's CredentialProviderConfig (a file, or a
	// directory of *.yaml/*.yml/*.json files); needs BinDir.
	Config string `json:"config,omitempty"`
	// BinDir is the directory of the plugin executables Config names (a
	// plugin is only ever run from there).
	BinDir string `json:"binDir,omitempty"`
	// Timeout is the longest run of one plugin, in (0, 1m].
	Timeout metav1.Duration `json:"timeout"`
	// MaxRuns is the plugin processes running at once, 1..64.
	MaxRuns int `json:"maxRuns"`
	// MaxRunsPerNamespace is how many of those one namespace's
	// resolutions may start, 1..MaxRuns.
	MaxRunsPerNamespace int `json:"maxRunsPerNamespace"`
}

// Gate is the scheduling gate and its controller.
type Gate struct {
	// Controller runs the gate controller (on the elected leader); off,
	// admission still gates.
	Controller bool `json:"controller"`
	// Timeout is the longest time a pod stays gated, in (0, 10m].
	Timeout metav1.Duration `json:"timeout"`
	// Workers is the gated pods decided at once, 1..256.
	Workers int `json:"workers"`
	// WorkersPerNamespace is how many of those one namespace may hold
	// (0: a quarter of Workers, at least 1).
	WorkersPerNamespace int `json:"workersPerNamespace"`
	// Attempt is the longest one worker waits for a pod's images before it
	// moves on, in (0, Timeout].
	Attempt metav1.Duration `json:"attempt"`
}

// Inference reads an image's needs from its entrypoint's ELF records.
type Inference struct {
	// ELF reads what an image platform with no variant and no isa.request
	// label needs from its entrypoint binary (RISC-V .riscv.attributes,
	// x86-64 ISA_1_NEEDED), in the gate controller.
	ELF bool `json:"elf"`
	// MaxBytes is the uncompressed layer bytes read per image.
	MaxBytes int64 `json:"maxBytes"`
	// Timeout is the time spent per image, in (0, 1m].
	Timeout metav1.Duration `json:"timeout"`
}

// LeaderElection elects one replica.
type LeaderElection struct {
	// Enabled elects one replica with a Lease in the webhook's namespace
	// (false: this process runs everything; one replica only).
	Enabled bool `json:"enabled"`
}

// Events are the Events on decided pods.
type Events struct {
	// Pods records IsamatchDecided, IsamatchImageUnresolved and
	// IsamatchNoNode on each decided pod (on the elected leader).
	Pods bool `json:"pods"`
	// QPS is the most Events on decided pods recorded a second, in
	// (0, 1000], and at most clientConnection.qps (the lower holds): a
	// burst of pods has its Events after it, newest first, instead of
	// during it.
	QPS float32 `json:"qps"`
	// Burst is how many may go at once above it, in 1..2000, and at most
	// clientConnection.burst.
	Burst int32 `json:"burst"`
}

// Misplacement watches scheduled pods for containers that died of SIGILL
// or "exec format error".
type Misplacement struct {
	// Events records IsamatchMisplaced on such a pod and counts it.
	Events bool `json:"events"`
	// Evict evicts such a pod that isamatch did not decide and that a
	// controller (not a DaemonSet) replaces; needs Events and create on
	// pods/eviction.
	Evict bool `json:"evict"`
	// EvictGrace is how long after the webhook starts its first eviction
	// waits, 0..10m (0: none): until the API server reaches the webhook
	// again (its Service's endpoints, kube-proxy), a replacement would be
	// admitted undecided like the pod it replaces.
	EvictGrace metav1.Duration `json:"evictGrace"`
}

// Audit is the periodic audit of the running pods.
type Audit struct {
	// Interval is how often the elected leader audits (0: never; else at
	// least 10s).
	Interval metav1.Duration `json:"interval"`
}
