package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/metrics"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/descheduler/client"
	eutils "sigs.k8s.io/descheduler/pkg/descheduler/evictions/utils"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/tracing"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/isafit"
	"github.com/isamatch/isamatch/rebalance/pkg/trigger"
	"github.com/isamatch/isamatch/rebalance/pkg/weightedload"
)

// serve is descheduler's app.Run (signals, /metrics and /healthz on the
// secure port, tracing) around rebalance instead of descheduler.Run.
func serve(rootCtx context.Context, rs *options.DeschedulerServer, trig trigger.Options, bo budget.Options) error {
	ctx, done := signal.NotifyContext(rootCtx, syscall.SIGINT, syscall.SIGTERM)
	defer done()

	pathRecorderMux := mux.NewPathRecorderMux("descheduler")
	if !rs.DisableMetrics {
		pathRecorderMux.Handle("/metrics", legacyregistry.HandlerWithReset())
	}
	healthz.InstallHandler(pathRecorderMux, healthz.NamedCheck("Descheduler", healthz.PingHealthz.Check))
	var stoppedCh <-chan struct{}
	if rs.SecureServingInfo != nil {
		var err error
		if stoppedCh, _, err = rs.SecureServingInfo.Serve(pathRecorderMux, 0, ctx.Done()); err != nil {
			return fmt.Errorf("start secure server: %w", err)
		}
	}
	if err := tracing.NewTracerProvider(ctx, rs.Tracing.CollectorEndpoint, rs.Tracing.TransportCert, rs.Tracing.ServiceName, rs.Tracing.ServiceNamespace, rs.Tracing.SampleRate, rs.Tracing.FallbackToNoOpProviderOnError); err != nil {
		klog.ErrorS(err, "Failed to create tracer provider")
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			klog.ErrorS(err, "Failed to shut the tracer provider down")
		}
	}()
	// As descheduler: a large fake watch channel for dry runs over
	// clusters with thousands of pods.
	watch.DefaultChanSize = 100000

	err := rebalance(ctx, rs, trig, bo)
	done()
	if stoppedCh != nil {
		<-stoppedCh
	}
	return err
}

// rebalance is descheduler.Run (clients, policy, Eviction API version,
// metrics client, leader election) with cycles run by trigger.Loop: each
// is one descheduler.RunDeschedulerStrategies with interval 0, so that a
// trigger can start one without interrupting a running cycle. Unlike
// descheduler, it holds leadership itself and passes the leader's context
// down, so a lost lease stops the cycles (and the process).
func rebalance(ctx context.Context, rs *options.DeschedulerServer, trig trigger.Options, bo budget.Options) error {
	metrics.Register()
	cycles := k8smetrics.NewCounterVec(&k8smetrics.CounterOpts{
		Subsystem: "isamatch_rebalancer",
		Name:      "cycles_total",
		Help:      "Rebalancer cycles run, by what started them: start, timer, node_join or threshold.",
	}, []string{"trigger"})
	legacyregistry.MustRegister(cycles)

	conn := rs.ClientConnection
	if rs.KubeconfigFile != "" && conn.Kubeconfig == "" {
		conn.Kubeconfig = rs.KubeconfigFile
	}
	kc, err := client.CreateClient(conn, "descheduler")
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if rs.EventClient, err = client.CreateClient(conn, ""); err != nil {
		return fmt.Errorf("create event client: %w", err)
	}
	rs.Client = kc
	// descheduler builds its global plugin registry from scratch;
	// isamatch's plugins join it right after, sharing one eviction budget
	// across cycles.
	ledger := budget.New(bo, nil)
	// WeightedLoad's usage: metrics reads the Metrics API through the
	// client descheduler would build for its own metrics collector.
	mc, err := client.CreateMetricsClient(conn, "descheduler")
	if err != nil {
		return fmt.Errorf("create metrics client: %w", err)
	}
	descheduler.SetupPlugins()
	isafit.Register(pluginregistry.PluginRegistry, ledger)
	weightedload.Register(pluginregistry.PluginRegistry, weightedload.Deps{Budget: ledger, Metrics: mc, Observer: newLoadMetrics()})
	policy, err := descheduler.LoadPolicyConfig(rs.PolicyConfigFile, kc, pluginregistry.PluginRegistry)
	if err != nil {
		return err
	}
	if policy == nil {
		return errors.New("descheduler policy is nil")
	}
	gv, err := eutils.SupportEviction(kc)
	if err != nil {
		return fmt.Errorf("find the Eviction API: %w", err)
	}
	if gv == "" {
		return errors.New("the API server serves no Eviction API (policy/v1 or policy/v1beta1 pods/eviction)")
	}
	if (policy.MetricsCollector != nil && policy.MetricsCollector.Enabled) || hasKubernetesMetrics(policy) {
		if rs.MetricsClient, err = client.CreateMetricsClient(conn, "descheduler"); err != nil {
			return fmt.Errorf("create metrics client: %w", err)
		}
	}
	sel, threshold, err := trigger.FromPolicy(policy)
	if err != nil {
		return err
	}
	if !trig.Threshold {
		threshold = 0
	}

	interval := rs.DeschedulingInterval
	if rs.LeaderElection.LeaderElect && interval == 0 {
		return errors.New("--leader-elect needs --descheduling-interval above 0 (0 runs one cycle and exits)")
	}
	// Every cycle is one descheduler run that ends after its cycle.
	rs.DeschedulingInterval = 0

	lead := func(ctx context.Context) error {
		triggers := make(chan trigger.Reason, 1)
		if interval > 0 && trig.Any() {
			wo := trig.Watch(threshold, sel)
			if err := trigger.Watch(ctx, kc, wo, func(r trigger.Reason) {
				select {
				case triggers <- r:
					klog.InfoS("Cycle triggered", "trigger", r.Kind, "node", r.Node)
				default: // one is pending already
				}
			}); err != nil {
				return err
			}
			klog.InfoS("Triggers on", "nodeJoin", trig.NodeJoin, "cpuThresholdPercent", threshold, "thresholdRearm", trig.ThresholdRearm,
				"minInterval", trig.MinInterval, "nodeCooldown", trig.NodeCooldown, "nodeSelector", sel.String())
		}
		loop := trigger.Loop{
			Interval: interval, MinInterval: trig.MinInterval,
			Cycle: func(ctx context.Context) error {
				return descheduler.RunDeschedulerStrategies(ctx, rs, policy, gv)
			},
			Done: func(r trigger.Reason, took time.Duration, err error) {
				cycles.WithLabelValues(string(r.Kind)).Inc()
				if err != nil {
					klog.ErrorS(err, "Cycle failed", "trigger", r.Kind, "node", r.Node, "took", took)
					return
				}
				klog.InfoS("Cycle done", "trigger", r.Kind, "node", r.Node, "took", took)
			},
		}
		loop.Run(ctx, triggers)
		return nil
	}
	if !rs.LeaderElection.LeaderElect || rs.DryRun {
		if rs.LeaderElection.LeaderElect {
			klog.InfoS("Warning: DryRun is set to True. You need to disable it to use Leader Election.")
		}
		return lead(ctx)
	}
	return leaderElected(ctx, rs, kc, lead)
}

func hasKubernetesMetrics(p *api.DeschedulerPolicy) bool {
	for _, m := range p.MetricsProviders {
		if m.Source == api.KubernetesMetrics {
			return true
		}
	}
	return false
}

// leaderElected runs lead while this process holds the Lease of
// --leader-elect-resource-namespace/name, and returns an error when it
// loses the Lease before ctx ends.
func leaderElected(ctx context.Context, rs *options.DeschedulerServer, kc clientset.Interface, lead func(context.Context) error) error {
	le := rs.LeaderElection
	if le.ResourceNamespace == "" || le.ResourceName == "" {
		return fmt.Errorf("--leader-elect-resource-namespace %q and --leader-elect-resource-name %q: both must be set", le.ResourceNamespace, le.ResourceName)
	}
	id := string(uuid.NewUUID())
	if host, err := os.Hostname(); err == nil {
		id = host + "_" + id
	}
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName, kc.CoreV1(), kc.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("create leader election lock: %w", err)
	}
	started, leadDone := make(chan struct{}), make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		ReleaseOnCancel: true,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				klog.InfoS("Started leading", "lease", le.ResourceNamespace+"/"+le.ResourceName, "identity", id)
				close(started)
				leadDone <- lead(ctx)
			},
			OnStoppedLeading: func() { klog.InfoS("Stopped leading", "identity", id) },
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	// Run has cancelled the leader's context; wait for the cycle to stop.
	var leadErr error
	select {
	case <-started:
		select {
		case leadErr = <-leadDone:
		case <-time.After(leadStopTimeout):
			leadErr = fmt.Errorf("the running cycle did not stop within %s of the end of leadership", leadStopTimeout)
		}
	default:
	}
	if leadErr != nil {
		return leadErr
	}
	if ctx.Err() == nil {
		return errors.New("lost the leader election Lease")
	}
	return nil
}

// leadStopTimeout bounds the wait for a cycle to stop after leadership
// ends.
const leadStopTimeout = 30 * time.Second
