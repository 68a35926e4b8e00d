package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/isamatch/isamatch/pkg/audit/scanner"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/gate"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/inventory/informer"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/misplace/watch"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/podevents"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/registry/credprov"
)

// setup builds the manager with everything registered, in this order:
//
//  1. the webhook server and the manager, which is given the server but
//     does not run it yet;
//  2. the certificate rotator (with server.certRotation) and the watch of the
//     Secret it writes, which closes certsReady once a serving certificate
//     is loaded and the webhook configuration trusts its CA;
//  3. the node inventory, the index of the nodes' QEMU_CPU values (with
//     admission.qemuCPU inject, on the same node informer), the watch of the gate
//     controller's Lease (a gating admission.resolve mode with leader election:
//     admission gates a pod only while a controller holds it) and the
//     mutating handler;
//  4. a starter that waits for certsReady and only then registers the
//     handler through mgr.GetWebhookServer();
//  5. the gate controller (unless admission.resolve sync or gate.controller false),
//     which runs on the elected leader only;
//  6. the pod events (unless events.pods false), on the elected leader,
//     with the handler explaining each decision again for its Event;
//  7. the misplacement watcher and the audit (unless
//     misplacement.events false and audit.interval 0), on the elected
//     leader;
//  8. the health and readiness checks.
//
// The order of 4 is the one that matters. controller-runtime adds the
// webhook server to the manager on the first call of GetWebhookServer(),
// and the server reads its certificate when it starts: a call during
// set-up would start it with the manager, before the rotator has written
// a certificate, and the server would fail. So nothing here calls
// mgr.GetWebhookServer() but the starter, which runs once the manager is
// up (a runnable added to a running manager starts at once); the readiness
// check holds the server itself (srv) for the same reason.
func setup(cfg *rest.Config, o options) (manager.Manager, error) {
	var certs *secretCerts
	if o.certRotation {
		certs = &secretCerts{key: types.NamespacedName{Namespace: o.namespace, Name: CertSecretName}}
	}
	srv, tlsOpts, err := newWebhookServer(o, certs)
	if err != nil {
		return nil, err
	}
	mgr, err := newManager(cfg, o, srv, tlsOpts)
	if err != nil {
		return nil, err
	}
	certsReady, err := addCertRotator(mgr, cfg, o, certs)
	if err != nil {
		return nil, err
	}
	inv, err := informer.Setup(mgr)
	if err != nil {
		return nil, fmt.Errorf("set up node inventory: %w", err)
	}
	leaseWatch, err := addGateLeaseWatch(mgr, o)
	if err != nil {
		return nil, err
	}
	var gateAlive func() bool
	if leaseWatch != nil {
		gateAlive = leaseWatch.Alive
	}
	var emulators engine.Emulators
	if o.qemuCPU == v1alpha1.QEMUCPUInject {
		if emulators, err = informer.SetupEmulators(mgr); err != nil {
			return nil, fmt.Errorf("set up emulator index: %w", err)
		}
	}
	handler, m, err := newHandler(mgr, inv, emulators, o, gateAlive)
	if err != nil {
		return nil, err
	}
	if leaseWatch != nil {
		leaseWatch.Metrics = m.gate
	}
	if err := addWebhookStarter(mgr, certsReady, handler); err != nil {
		return nil, err
	}
	if o.runsGateController() {
		if err := gate.Setup(mgr, handler, gate.Options{Timeout: o.gateTimeout, Workers: o.gateWorkers, WorkersPerNamespace: o.gateNSWorkers, Attempt: o.gateAttempt, Metrics: m.gate}); err != nil {
			return nil, err
		}
	}
	if o.podEvents {
		if err := podevents.Setup(mgr, podevents.Options{Explain: handler.Explain, QPS: float64(o.eventsQPS), Burst: int(o.eventsBurst), Metrics: m.podevents}); err != nil {
			return nil, err
		}
	}
	if err := addMisplacement(mgr, inv, o, m); err != nil {
		return nil, err
	}
	if err := addChecks(mgr, srv, certsReady, inv, o.draining); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newWebhookServer builds the (not yet started) webhook server and returns
// the TLS options it uses, which the metrics server shares. With certs the
// server takes its certificate from them, not from server.certDir.
func newWebhookServer(o options, certs *secretCerts) (webhook.Server, []func(*tls.Config), error) {
	tlsOpts := serverTLSOptions(o.enableHTTP2)
	webhookTLS := tlsOpts
	if o.clientCAFile != "" {
		opt, err := requireClientCert(o.clientCAFile)
		if err != nil {
			return nil, nil, err
		}
		webhookTLS = append(slices.Clone(tlsOpts), opt)
	}
	if certs != nil {
		webhookTLS = append(slices.Clone(webhookTLS), func(c *tls.Config) { c.GetCertificate = certs.GetCertificate })
	}
	srv := webhook.NewServer(webhook.Options{Port: o.port, CertDir: o.certDir, TLSOpts: webhookTLS})
	return srv, tlsOpts, nil
}

// runsGateController reports whether this process runs the gate
// controller: with a gating admission.resolve mode and gate.controller.
func (o options) runsGateController() bool {
	return o.gateController && o.resolve != mutate.ResolveSync
}

// needsLeader reports whether this process runs something one replica
// only may run: the gate controller, the pod events, the misplacement
// watcher or the audit.
func (o options) needsLeader() bool {
	return o.runsGateController() || o.podEvents || o.misplaceEvents || o.auditInterval > 0
}

// watcherGrace is misplacement.evictGrace as watch.Options takes it: the
// file's 0 (none) is the watcher's negative; its 0 is the default.
func watcherGrace(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// addMisplacement adds the informer of scheduled pods with the
// misplacement watcher (misplacement.events) and the audit
// (audit.interval), when either is on.
func addMisplacement(mgr manager.Manager, inv *inventory.Inventory, o options, m *webhookMetrics) error {
	if !o.misplaceEvents && o.auditInterval == 0 {
		return nil
	}
	pods, err := watch.Setup(mgr, watch.Options{Events: o.misplaceEvents, Evict: o.evictMisplaced, EvictGrace: watcherGrace(o.evictGrace), Metrics: m.misplace, Keys: o.keys()})
	if err != nil {
		return err
	}
	if o.auditInterval == 0 {
		return nil
	}
	var gateTimeout time.Duration
	if o.resolve != mutate.ResolveSync {
		gateTimeout = o.gateTimeout
	}
	return scanner.Setup(mgr, pods, inv, scanner.Options{
		WebhookConfig: WebhookConfigName, SkipNamespaces: skipNamespaces(o), GateTimeout: gateTimeout,
		Interval: o.auditInterval, Metrics: m.audit, Keys: o.keys(),
	})
}

// skipNamespaces are the namespaces the webhook leaves alone.
func skipNamespaces(o options) []string {
	return []string{metav1.NamespaceSystem, o.namespace}
}

// leaseName is the Lease the replicas elect the gate controller's runner
// with, in namespace.
const leaseName = "isamatch-webhook"

func newManager(cfg *rest.Config, o options, srv webhook.Server, tlsOpts []func(*tls.Config)) (manager.Manager, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	// The gate controller and the pod events read pods from the cache:
	// only unscheduled ones, which gated and just-admitted pods are, are
	// listed and watched, each cut to what they read (mutate.CachePod).
	byObject := map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Field: fields.OneTermEqualSelector("spec.nodeName", ""), Transform: mutate.CachePod},
		// The node inventory's informer (metadata only) keeps the labels
		// and isamatch's annotations, with the label strings shared.
		&corev1.Node{}: {Transform: informer.NodeTransform()},
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		// Every replica serves admission; only the gate controller (two
		// would race to release the same pods) and the pod events (each
		// replica would record them) need a leader.
		LeaderElection:                o.needsLeader() && o.leaderElect,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       o.namespace,
		LeaderElectionReleaseOnCancel: true,
		Scheme:                        scheme,
		Metrics:                       metricsServerOptions(o.metricsAddr, o.metricsSecure, o.metricsAudience, tlsOpts),
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		WebhookServer:                 srv,
		// Nothing reads managedFields; in the node inventory's cache they
		// were a third of the heap (5,000 nodes).
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: byObject},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	return mgr, nil
}

// addGateLeaseWatch adds, when a gating admission.resolve mode relies on an elected
// gate controller, the watch of the Lease it is elected with; nil when
// pods are never gated or this process runs the controller without an
// election (it is alive while the process is). With gate.controller false
// the controller is another process's, elected with the same Lease.
func addGateLeaseWatch(mgr manager.Manager, o options) (*gate.LeaseWatch, error) {
	if o.resolve == mutate.ResolveSync || (o.runsGateController() && !o.leaderElect) {
		return nil, nil
	}
	w := &gate.LeaseWatch{Reader: mgr.GetAPIReader(), Key: client.ObjectKey{Namespace: o.namespace, Name: leaseName}}
	if err := mgr.Add(w); err != nil {
		return nil, fmt.Errorf("add the gate controller's lease watch: %w", err)
	}
	return w, nil
}

// newHandler builds the resolver and the pod mutator and registers their
// metrics and the gate controller's.
func newHandler(mgr manager.Manager, inv *inventory.Inventory, emulators engine.Emulators, o options, gateAlive func() bool) (*mutate.PodMutator, *webhookMetrics, error) {
	keychains, err := newKeychainFactory(mgr.GetConfig(), o)
	if err != nil {
		return nil, nil, err
	}
	m, err := registerMetrics(metrics.Registry)
	if err != nil {
		return nil, nil, err
	}
	ro := o.registryOptions(keychains, m.registry)
	if o.credProviderConfig != "" {
		kc, err := credprov.New(credprov.Options{
			ConfigPath: o.credProviderConfig, BinDir: o.credProviderBinDir,
			Timeout: o.pluginTimeout, MaxRuns: o.pluginRuns, MaxRunsPerNamespace: o.pluginRunsPerNS,
			Metrics: m.credprov,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("credentialProviders.config: %w", err)
		}
		ro.NodeKeychain = kc
	}
	if o.registryCA != "" {
		if ro.RegistryCA, err = registry.LoadCA(o.registryCA); err != nil {
			return nil, nil, fmt.Errorf("registry.caFile: %w", err)
		}
	}
	if o.hostsDir != "" {
		if ro.Hosts, err = registry.ReadHostsDir(o.hostsDir); err != nil {
			return nil, nil, fmt.Errorf("registry.hostsDir: %w", err)
		}
		log := ctrl.Log.WithName("webhook")
		for _, w := range ro.Hosts.Warnings {
			log.Info("Registry hosts dir: unsupported entry ignored", "warning", w)
		}
		log.Info("Registry hosts dir read", "dir", o.hostsDir, "registries", ro.Hosts.Registries())
	}
	res, err := registry.NewResolver(ro)
	if err != nil {
		return nil, nil, err
	}
	infer, err := newInferrer(metrics.Registry, res, o)
	if err != nil {
		return nil, nil, err
	}
	var nsEnforcement func(context.Context, string) string
	if len(o.nsModes) > 0 {
		nsEnforcement = newNSLabels(mgr.GetAPIReader()).enforcement
	}
	return mutate.NewPodMutator(res, inv, mutate.Options{
		Infer:                infer,
		NamespaceModes:       o.nsModes,
		NamespaceEnforcement: nsEnforcement,
		Budget:               o.budget,
		SkipNamespaces:       skipNamespaces(o),
		Metrics:              m.mutate,
		Enforcement:          o.enforcement,
		Resolve:              o.resolve,
		GateAlive:            gateAlive,
		Emulators:            emulators,
		Keys:                 o.keys(),

		FallbackArchitecture: isa.Arch(o.fallbackArch),
	}), m, nil
}

// registryOptions are the resolver's options of the registry flags, with
// the pod keychains and metrics given (credential providers and CA added
// by the caller, who reads their files).
func (o options) registryOptions(keychains registry.KeychainFactory, m *registry.Metrics) registry.Options {
	ttl := o.cacheTTL
	if ttl == 0 {
		ttl = -1 // --cache-ttl=0 disables the cache of tags
	}
	return registry.Options{
		Keychains:           keychains,
		InsecureRegistries:  o.insecureRegistries,
		AllowedRegistries:   o.allowRegistries,
		ClusterNetworks:     o.clusterNetworks,
		Mirrors:             o.mirrors,
		MaxPerHost:          o.perHost,
		MaxPerNamespace:     o.perNamespace,
		MaxResolutionBytes:  o.maxResolution,
		MaxIndexEntries:     o.maxIndexEntries,
		MaxCacheBytes:       o.cacheBytes,
		MaxDigestCacheBytes: o.digestCacheBytes,
		TTL:                 ttl,
		Metrics:             m,

		IgnoreBareImageLabel: !o.bareKeys,
	}
}

// keys are the pod keys requests are read from (admission.bareKeys).
func (o options) keys() engine.KeyOptions {
	return engine.KeyOptions{IgnoreBareKeys: !o.bareKeys}
}

// newKeychainFactory returns where pull credentials come from: with
// registry.pullSecrets the pod's and its ServiceAccount's pull secrets, read with a
// client of their own; otherwise nil: anonymous access, whose results every
// namespace shares.
func newKeychainFactory(cfg *rest.Config, o options) (registry.KeychainFactory, error) {
	if !o.pullSecrets {
		return nil, nil
	}
	// A cold image resolution reads the pod's pull credentials (service
	// account and secrets) from the API server. At client-go's default of
	// 5 requests/s (20 with the in-cluster config) the rate limiter, not the
	// registry, capped cold admissions at about 3 per second.
	kcfg := rest.CopyConfig(cfg)
	kcfg.QPS, kcfg.Burst = max(kcfg.QPS, keychainQPS), max(kcfg.Burst, keychainBurst)
	clientset, err := kubernetes.NewForConfig(kcfg)
	if err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	return registry.KubernetesKeychain(clientset), nil
}

// addWebhookStarter adds the runnable that registers handler once the
// serving certificate is in place; its GetWebhookServer() call is what adds
// the webhook server to the (by then running) manager. See setup.
func addWebhookStarter(mgr manager.Manager, certsReady <-chan struct{}, handler *mutate.PodMutator) error {
	err := mgr.Add(everyReplica(func(ctx context.Context) error {
		select {
		case <-certsReady:
		case <-ctx.Done():
			return nil
		}
		mgr.GetWebhookServer().Register(MutatePath, &webhook.Admission{Handler: admissionHandler{handler}})
		return nil
	}))
	if err != nil {
		return fmt.Errorf("add webhook starter: %w", err)
	}
	return nil
}

// everyReplica is a runnable that runs on every replica: a plain
// manager.RunnableFunc would wait for the leader election.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

func (everyReplica) NeedLeaderElection() bool { return false }

// addChecks adds /healthz and /readyz: ready once the certificate is in
// place, the node inventory has synced and the webhook server serves, and
// not ready again once draining is closed (nil: never).
func addChecks(mgr manager.Manager, srv webhook.Server, certsReady <-chan struct{}, inv *inventory.Inventory, draining <-chan struct{}) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	started := srv.StartedChecker()
	err := mgr.AddReadyzCheck("webhook", func(req *http.Request) error {
		select {
		case <-draining:
			return errors.New("shutting down: still serving while the endpoint leaves the Service")
		default:
		}
		select {
		case <-certsReady:
		default:
			return errors.New("serving certificate not ready yet")
		}
		if !inv.HasSynced() {
			return errors.New("node inventory not synced yet")
		}
		return started(req)
	})
	if err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	return nil
}
