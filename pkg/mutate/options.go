package mutate

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Options configures a PodMutator. The zero value is usable.
type Options struct {
	// Budget bounds all registry work for one admission (default 8s); the
	// request context's own deadline, when earlier, wins.
	Budget time.Duration
	// SkipNamespaces are never mutated (default kube-system and
	// isamatch-system).
	SkipNamespaces []string
	// Metrics is optional; the caller registers its collectors.
	Metrics *Metrics
	// MaxRequiredTerms caps the size of the required node affinity after
	// combining the pod's terms with isamatch's (default 64).
	MaxRequiredTerms int
	// Enforcement is EnforcementDeny (the default) or EnforcementWarn: in
	// warn mode a pod isamatch would deny is admitted unchanged but for the
	// decision annotations, with an admission warning carrying the denial.
	Enforcement string
	// NamespaceEnforcement, when set, returns the value of a namespace's
	// isa.EnforcementLabel ("" when it has none or cannot be read). A
	// value in NamespaceModes replaces Enforcement for the namespace's
	// pods; any other value is ignored (logged).
	NamespaceEnforcement func(ctx context.Context, namespace string) string
	// NamespaceModes are the enforcement modes a namespace may choose
	// with isa.EnforcementLabel. Empty: namespaces cannot choose.
	NamespaceModes []string
	// Resolve is how a pod whose image platforms must be looked up is
	// admitted: ResolveSync (the default here) waits for the registry
	// within Budget; ResolveGate and ResolveAuto never wait: the pod gets
	// the scheduling gate isa.ResolveGate and the gate controller
	// (ReleaseGated) writes the rest. ResolveGate gates every pod with an
	// image, ResolveAuto only one with an image not in the cache.
	Resolve string
	// GateAlive, when set, reports whether a gate controller is alive to
	// release gated pods (gate.LeaseWatch); while it says no, a pod is not
	// gated but resolved at admission as with ResolveSync, so none waits
	// for a controller that is not there. Nil: always alive.
	GateAlive func() bool
	// Infer, when set and Resolve is gate or auto, reads what a platform
	// with no ISA of its own (no variant, no isa.request label) needs from
	// its entrypoint binary, for pods that ask nothing themselves: the
	// gate controller reads images (ReleaseGated), admission only uses what
	// was read before, and in auto mode gates a pod whose platforms were
	// not read yet (not one whose read failed a moment ago: Cached answers
	// that failure, imageisa.ErrFailedRecently). Nil: no inference.
	Infer PlatformInferrer
	// FallbackArchitecture, when set (one of FallbackArchitectures), is
	// the architecture required of the node for a pod that asks no ISA
	// itself and has an image whose platforms could not be resolved, at
	// admission or when the gate controller releases it (ReleaseGated,
	// also past the gate's bound). Empty: such an image adds no constraint.
	FallbackArchitecture isa.Arch
	// Emulators, when set, is asked which QEMU_CPU to set in the
	// containers of a pod with isa.qemu (qemuenv.go); nil sets none.
	Emulators engine.Emulators
	// Keys chooses the pod keys requests are read from (all by default);
	// the registry resolver chooses the image labels alike
	// (registry.Options.IgnoreBareImageLabel).
	Keys engine.KeyOptions
}

// Resolve modes.
const (
	ResolveSync = "sync"
	ResolveGate = "gate"
	ResolveAuto = "auto"
)

// Enforcement modes.
const (
	EnforcementDeny = "deny"
	EnforcementWarn = "warn"
)

// Defaults.
const (
	DefaultBudget           = 8 * time.Second
	DefaultMaxRequiredTerms = engine.DefaultMaxRequiredTerms
)

// DefaultSkipNamespaces are skipped when Options.SkipNamespaces is nil.
var DefaultSkipNamespaces = []string{"kube-system", "isamatch-system"}

func (o Options) withDefaults() Options {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.SkipNamespaces == nil {
		o.SkipNamespaces = DefaultSkipNamespaces
	}
	if o.Enforcement == "" {
		o.Enforcement = EnforcementDeny
	}
	if o.Resolve == "" {
		o.Resolve = ResolveSync
	}
	if o.MaxRequiredTerms <= 0 {
		o.MaxRequiredTerms = DefaultMaxRequiredTerms
	}
	return o
}

// Metrics counts the webhook's decisions. Register Collectors with the
// manager's registry (controller-runtime's metrics.Registry).
type Metrics struct {
	// Decisions by outcome: "skipped", "mutated", "unchanged", "gated",
	// "denied", "would_deny" (warn mode), "error".
	Decisions *prometheus.CounterVec
	// ImageErrors counts images whose platforms could not be resolved, by
	// registry error kind ("unauthorized", "timeout", ...).
	ImageErrors *prometheus.CounterVec
	// Warnings counts admission warnings by reason: "imageError",
	// "imageUnsupported", "imageLabel", "noNode", "wouldDeny", "fallback".
	Warnings *prometheus.CounterVec
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_webhook_decisions_total",
			Help: "Pod admissions handled by the isamatch webhook, by outcome.",
		}, []string{"outcome"}),
		ImageErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_webhook_image_errors_total",
			Help: "Images admitted without their platform constraint because resolution failed, by error kind.",
		}, []string{"kind"}),
		Warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_webhook_warnings_total",
			Help: "Admission warnings returned by the isamatch webhook, by reason.",
		}, []string{"reason"}),
	}
}

// Collectors returns the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Decisions, m.ImageErrors, m.Warnings}
}

func (m *Metrics) decision(outcome string) {
	if m != nil {
		m.Decisions.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) imageError(kind string) {
	if m != nil {
		m.ImageErrors.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) warning(reason string) {
	if m != nil {
		m.Warnings.WithLabelValues(reason).Inc()
	}
}
