package main

import (
	"flag"
	"os"

	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// registerOwn registers the webhook's flags: the configuration file and
// its drop-ins, the kubeconfig, logging and --version. Every other setting
// is a field of the configuration file (removedFlags lists the flags that
// set them once).
func (o *options) registerOwn(fs *flag.FlagSet) {
	fs.StringVar(&o.configFile, "config", "", "the WebhookConfiguration file (config.isamatch.io/v1alpha1, docs/configuration.md): every setting but the flags here")
	fs.StringVar(&o.configDir, "config-dir", "", "a directory of drop-in WebhookConfiguration files (*.yaml, *.yml, *.json), each read in name order over --config and the ones before it: the fields a drop-in names replace theirs (a list whole), as the kubelet's --config-dir")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
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
	o.eventsQPS, o.eventsBurst = min(c.Events.QPS, c.ClientConnection.QPS), min(c.Events.Burst, c.ClientConnection.Burst)
	o.misplaceEvents, o.evictMisplaced, o.auditInterval = c.Misplacement.Events, c.Misplacement.Evict, c.Audit.Interval.Duration
	o.evictGrace = c.Misplacement.EvictGrace.Duration
	o.qps, o.burst = c.ClientConnection.QPS, c.ClientConnection.Burst
	o.inferELF, o.inferMaxBytes, o.inferTimeout = c.Inference.ELF, c.Inference.MaxBytes, c.Inference.Timeout.Duration
}
