package scanner

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// PodSource holds the scheduled pods (watch.Runner, package
// pkg/misplace/watch).
type PodSource interface {
	Pods() iter.Seq[*corev1.Pod]
	HasSynced() bool
}

// Inventory provides the node inventory (inventory.Inventory).
type Inventory interface {
	Snapshot() *engine.Snapshot
}

// DefaultInterval is how often the Scanner audits.
const DefaultInterval = time.Minute

// gateGrace is how long past the gate's bound a gated pod counts as
// overdue: the controller releases it at the bound, within a retry.
const gateGrace = time.Minute

// Scanner audits the cluster every Interval and sets Metrics. Its zero
// Interval is DefaultInterval.
type Scanner struct {
	Pods      PodSource
	Inventory Inventory
	// Cache reads node metadata and unscheduled pods (the manager's
	// cache, whose informers the webhook runs anyway).
	Cache client.Reader
	// API reads the MutatingWebhookConfiguration and the namespaces'
	// metadata once per audit (the manager's API reader).
	API client.Reader
	// WebhookConfig names the MutatingWebhookConfiguration whose
	// selectors make the Scope; SkipNamespaces are the namespaces the
	// webhook skips.
	WebhookConfig  string
	SkipNamespaces []string
	// GateTimeout is the gate's bound; 0 when pods are never gated.
	GateTimeout time.Duration
	Metrics     *Metrics
	Interval    time.Duration
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
	Log  logr.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	matcher *engine.Matcher
}

var _ manager.LeaderElectionRunnable = (*Scanner)(nil)

// NeedLeaderElection: the leader exports the gauges.
func (*Scanner) NeedLeaderElection() bool { return true }

// Start audits once the pods are listed, then every Interval, until ctx
// ends. A failed audit is logged and tried again at the next tick.
func (s *Scanner) Start(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) { return s.Pods.HasSynced(), nil }); err != nil {
		return nil // ctx ended
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		counts, err := s.Scan(ctx)
		if err != nil {
			s.Log.Error(err, "Audit failed")
			return
		}
		s.Log.V(1).Info("audited", "misplaced", counts)
	}, interval)
	return nil
}

// Scan audits once, sets the gauges and returns how many pods each reason
// holds. It counts the findings as they come instead of collecting them,
// and reads the cached nodes without copying them: on a large cluster
// both would be most of the webhook's heap while an audit runs.
func (s *Scanner) Scan(ctx context.Context) (map[string]int, error) {
	if s.matcher == nil {
		s.matcher = engine.NewMatcher()
	}
	nodes := &metav1.PartialObjectMetadataList{}
	nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := s.Cache.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	byName := make(map[string]*metav1.ObjectMeta, len(nodes.Items))
	for k := range nodes.Items {
		byName[nodes.Items[k].Name] = &nodes.Items[k].ObjectMeta
	}
	snap := s.Inventory.Snapshot()
	counts := audit.Count(audit.Findings(audit.Input{Pods: s.Pods.Pods(), Nodes: byName, Inventory: snap, Scope: s.scope(ctx), Matcher: s.matcher, Keys: s.Keys}))
	if m := s.Metrics; m != nil {
		for r, n := range counts {
			m.Misplaced.WithLabelValues(r).Set(float64(n))
		}
		setNodes(m, snap)
		overdue, err := s.overdue(ctx)
		if err != nil {
			return counts, err
		}
		m.GatedOverdue.Set(float64(overdue))
	}
	return counts, nil
}

// scope reads the webhook's selectors and the namespaces' labels; what it
// cannot read, it leaves out (and logs): a missing configuration makes the
// default Scope, unknown namespace labels the name alone.
func (s *Scanner) scope(ctx context.Context) audit.Scope {
	sc := audit.Scope{SkipNamespaces: s.SkipNamespaces}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := s.API.Get(ctx, client.ObjectKey{Name: s.WebhookConfig}, mwc); err != nil {
		s.Log.Info("audit without the webhook's selectors", "error", err.Error())
		return sc
	}
	sc, err := audit.ScopeFrom(mwc, "", s.SkipNamespaces)
	if err != nil {
		s.Log.Info("audit without the webhook's selectors", "error", err.Error())
		return audit.Scope{SkipNamespaces: s.SkipNamespaces}
	}
	nss := &metav1.PartialObjectMetadataList{}
	nss.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := s.API.List(ctx, nss); err != nil {
		s.Log.Info("audit without namespace labels", "error", err.Error())
		return sc
	}
	labels := make(map[string]map[string]string, len(nss.Items))
	for _, ns := range nss.Items {
		labels[ns.Name] = ns.Labels
	}
	sc.NamespaceLabels = func(ns string) (map[string]string, bool) {
		l, ok := labels[ns]
		return l, ok
	}
	return sc
}

// overdue counts the pods gated past the gate's bound plus gateGrace.
func (s *Scanner) overdue(ctx context.Context) (int, error) {
	if s.GateTimeout <= 0 {
		return 0, nil
	}
	pods := &corev1.PodList{}
	if err := s.Cache.List(ctx, pods, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("list unscheduled pods: %w", err)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	n := 0
	for _, p := range pods.Items {
		if engine.HasGate(p.Spec.SchedulingGates) && p.DeletionTimestamp == nil && now().Sub(p.CreationTimestamp.Time) > s.GateTimeout+gateGrace {
			n++
		}
	}
	return n, nil
}

// setNodes sets the node inventory gauges from snap: every architecture
// the kubelets report, labelled and not.
func setNodes(m *Metrics, snap *engine.Snapshot) {
	labelled := map[string]int{}
	for _, g := range snap.Groups {
		labelled[string(g.Native.Arch)] += g.Nodes
	}
	m.Nodes.Reset()
	for arch, n := range snap.ArchNodes {
		m.Nodes.WithLabelValues(arch, strconv.FormatBool(true)).Set(float64(labelled[arch]))
		m.Nodes.WithLabelValues(arch, strconv.FormatBool(false)).Set(float64(max(0, n-labelled[arch])))
	}
	m.Groups.Set(float64(len(snap.Groups)))
}
