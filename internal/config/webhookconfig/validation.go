package webhookconfig

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/registry/credprov"
	"github.com/isamatch/isamatch/pkg/registry/netguard"
)

// Bounds the webhook's values are checked against.
const (
	// MaxBudget is the API server's longest webhook timeout.
	MaxBudget      = 10 * time.Second
	MaxGateTimeout = 10 * time.Minute
	MaxGateWorkers = 256
	// MinAuditInterval keeps the audit from listing every pod too often.
	MinAuditInterval = 10 * time.Second
	MaxInferTimeout  = time.Minute
	// MaxEvictGrace bounds misplacement.evictGrace: longer, a misplaced
	// pod crash-loops for nothing after every restart of the webhook.
	MaxEvictGrace = 10 * time.Minute
	// MaxClientQPS and MaxClientBurst bound clientConnection: past them
	// a setting is more likely a typo than a plan.
	MaxClientQPS      = 1000
	MaxClientBurst    = 2000
	maxPort           = 65535
	durationInRange   = "want a duration in (0, %s]"
	wantPositiveCount = "want a number >= 1"
)

// omit leaves the value out of an error whose detail names it already.
var omit = field.OmitValueType{}

// Validate checks a WebhookConfiguration; each error names the
// field path, the bad value and what is allowed.
func Validate(c *v1alpha1.WebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateWebhookServer(&c.Server, field.NewPath("server"))...)
	errs = append(errs, validateMetrics(&c.Metrics, field.NewPath("metrics"))...)
	errs = append(errs, validateAdmission(&c.Admission, field.NewPath("admission"))...)
	errs = append(errs, validateRegistry(&c.Registry, field.NewPath("registry"))...)
	errs = append(errs, validateCredentialProviders(&c.CredentialProviders, field.NewPath("credentialProviders"))...)
	errs = append(errs, validateGate(&c.Gate, field.NewPath("gate"))...)
	errs = append(errs, validateInference(&c.Inference, field.NewPath("inference"))...)
	if c.Misplacement.Evict && !c.Misplacement.Events {
		errs = append(errs, field.Invalid(field.NewPath("misplacement", "evict"), true,
			"needs misplacement.events: the watcher finds the pods it evicts"))
	}
	if d := c.Misplacement.EvictGrace.Duration; d < 0 || d > MaxEvictGrace {
		errs = append(errs, field.Invalid(field.NewPath("misplacement", "evictGrace"), d.String(),
			fmt.Sprintf("want a duration in [0, %s]", short(MaxEvictGrace))))
	}
	if q := c.ClientConnection.QPS; !(q > 0 && q <= MaxClientQPS) {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "qps"), q,
			fmt.Sprintf("want requests per second in (0, %d]", MaxClientQPS)))
	}
	if b := c.ClientConnection.Burst; b < 1 || b > MaxClientBurst {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), b,
			fmt.Sprintf("want a number in [1, %d]", MaxClientBurst)))
	}
	errs = append(errs, validateEvents(&c.Events, field.NewPath("events"))...)
	if d := c.Audit.Interval.Duration; d < 0 || (d > 0 && d < MinAuditInterval) {
		errs = append(errs, field.Invalid(field.NewPath("audit", "interval"), d.String(),
			fmt.Sprintf("want 0 (off) or at least %s", short(MinAuditInterval))))
	}
	return errs
}

// MaxShutdownDelay bounds server.shutdownDelay: a pod's default
// termination grace period is 30 s.
const MaxShutdownDelay = time.Minute

func validateWebhookServer(s *v1alpha1.WebhookServer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Port < 1 || s.Port > maxPort {
		errs = append(errs, field.Invalid(p.Child("port"), s.Port, fmt.Sprintf("want 1..%d", maxPort)))
	}
	if s.CertDir == "" {
		errs = append(errs, field.Invalid(p.Child("certDir"), s.CertDir, "empty: name the directory holding tls.crt and tls.key"))
	}
	if d := s.ShutdownDelay.Duration; d < 0 || d > MaxShutdownDelay {
		errs = append(errs, field.Invalid(p.Child("shutdownDelay"), d.String(),
			fmt.Sprintf("want a duration in [0, %s]: the pod's termination grace period must cover it", short(MaxShutdownDelay))))
	}
	return errs
}

func validateMetrics(m *v1alpha1.Metrics, p *field.Path) field.ErrorList {
	if err := metricsauth.CheckAudience(m.TokenAudience); err != nil {
		return field.ErrorList{field.Invalid(p.Child("tokenAudience"), omit, err.Error())}
	}
	return nil
}

func validateAdmission(a *v1alpha1.Admission, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if a.Enforcement != mutate.EnforcementDeny && a.Enforcement != mutate.EnforcementWarn {
		errs = append(errs, field.Invalid(p.Child("enforcement"), a.Enforcement, "want deny or warn"))
	}
	if _, err := mutate.ParseNamespaceModes(a.NamespaceEnforcement); err != nil {
		errs = append(errs, field.Invalid(p.Child("namespaceEnforcement"), strings.Join(a.NamespaceEnforcement, ","), err.Error()))
	}
	if a.Resolve != mutate.ResolveSync && a.Resolve != mutate.ResolveGate && a.Resolve != mutate.ResolveAuto {
		errs = append(errs, field.Invalid(p.Child("resolve"), a.Resolve, "want sync, gate or auto"))
	}
	if a.QEMUCPU != v1alpha1.QEMUCPUInject && a.QEMUCPU != v1alpha1.QEMUCPUOff {
		errs = append(errs, field.Invalid(p.Child("qemuCPU"), a.QEMUCPU, "want inject or off"))
	}
	if err := mutate.CheckFallback(a.FallbackArchitecture); err != nil {
		errs = append(errs, field.Invalid(p.Child("fallbackArchitecture"), omit, err.Error()))
	}
	if d := a.Budget.Duration; d <= 0 || d > MaxBudget {
		errs = append(errs, field.Invalid(p.Child("budget"), d.String(),
			fmt.Sprintf(durationInRange+"; the API server waits at most %s", short(MaxBudget), short(MaxBudget))))
	}
	return errs
}

func validateRegistry(r *v1alpha1.Registry, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.CacheTTL.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("cacheTTL"), r.CacheTTL.Duration.String(), "want a duration >= 0 (0 disables the cache)"))
	}
	if _, _, err := netguard.ParseAllowed(r.AllowRegistries); err != nil {
		errs = append(errs, field.Invalid(p.Child("allowRegistries"), omit, err.Error()))
	}
	if _, err := netguard.ParseClusterNetworks(r.ClusterNetworks); err != nil {
		errs = append(errs, field.Invalid(p.Child("clusterNetworks"), omit, err.Error()))
	}
	if _, err := registry.ParseMirrors(r.Mirrors); err != nil {
		errs = append(errs, field.Invalid(p.Child("mirrors"), omit, err.Error()))
	}
	for i, h := range r.InsecureRegistries {
		if h == "" || strings.Contains(h, "/") {
			errs = append(errs, field.Invalid(p.Child("insecureRegistries").Index(i), h, "want HOST:PORT without scheme or path"))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxPerHost", int64(r.MaxPerHost)}, {"maxPerNamespace", int64(r.MaxPerNamespace)},
		{"maxIndexEntries", int64(r.MaxIndexEntries)}, {"maxBytes", r.MaxBytes},
		{"cacheBytes", r.CacheBytes}, {"digestCacheBytes", r.DigestCacheBytes},
	} {
		if f.v < 1 {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, wantPositiveCount))
		}
	}
	return errs
}

func validateCredentialProviders(c *v1alpha1.CredentialProviders, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (c.Config == "") != (c.BinDir == "") {
		errs = append(errs, field.Invalid(p.Child("binDir"), c.BinDir,
			"credentialProviders.config and credentialProviders.binDir go together: give both or neither"))
	}
	if d := c.Timeout.Duration; d <= 0 || d > credprov.MaxTimeout {
		errs = append(errs, field.Invalid(p.Child("timeout"), d.String(),
			fmt.Sprintf(durationInRange+", as the kubelet allows a plugin", short(credprov.MaxTimeout))))
	}
	if c.MaxRuns < 1 || c.MaxRuns > credprov.MaxRunsLimit {
		errs = append(errs, field.Invalid(p.Child("maxRuns"), int64(c.MaxRuns), fmt.Sprintf("want 1..%d", credprov.MaxRunsLimit)))
	} else if c.MaxRunsPerNamespace < 1 || c.MaxRunsPerNamespace > c.MaxRuns {
		errs = append(errs, field.Invalid(p.Child("maxRunsPerNamespace"), int64(c.MaxRunsPerNamespace),
			fmt.Sprintf("want 1..%d (credentialProviders.maxRuns)", c.MaxRuns)))
	}
	return errs
}

func validateGate(g *v1alpha1.Gate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	timeout := g.Timeout.Duration
	if timeout <= 0 || timeout > MaxGateTimeout {
		errs = append(errs, field.Invalid(p.Child("timeout"), timeout.String(),
			fmt.Sprintf(durationInRange+"; a gated pod waits that long at most", short(MaxGateTimeout))))
	}
	if g.Workers < 1 || g.Workers > MaxGateWorkers {
		errs = append(errs, field.Invalid(p.Child("workers"), int64(g.Workers), fmt.Sprintf("want 1..%d", MaxGateWorkers)))
	} else if g.WorkersPerNamespace < 0 || g.WorkersPerNamespace > g.Workers {
		errs = append(errs, field.Invalid(p.Child("workersPerNamespace"), int64(g.WorkersPerNamespace),
			fmt.Sprintf("want 0..%d (gate.workers); 0 means a quarter of them", g.Workers)))
	}
	if a := g.Attempt.Duration; timeout > 0 && (a <= 0 || a > timeout) {
		errs = append(errs, field.Invalid(p.Child("attempt"), a.String(), fmt.Sprintf(durationInRange+" (gate.timeout)", short(timeout))))
	}
	return errs
}

func validateInference(in *v1alpha1.Inference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if in.MaxBytes < 1 {
		errs = append(errs, field.Invalid(p.Child("maxBytes"), in.MaxBytes, wantPositiveCount))
	}
	if d := in.Timeout.Duration; d <= 0 || d > MaxInferTimeout {
		errs = append(errs, field.Invalid(p.Child("timeout"), d.String(), fmt.Sprintf(durationInRange, short(MaxInferTimeout))))
	}
	return errs
}

// short writes a duration as a person would, 1m rather than 1m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// validateEvents checks the Events' pace; the webhook holds it to
// clientConnection's too.
func validateEvents(e *v1alpha1.Events, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q := e.QPS; !(q > 0 && q <= MaxClientQPS) {
		errs = append(errs, field.Invalid(p.Child("qps"), q,
			fmt.Sprintf("want Events per second in (0, %d]", MaxClientQPS)))
	}
	if b := e.Burst; b < 1 || b > MaxClientBurst {
		errs = append(errs, field.Invalid(p.Child("burst"), b,
			fmt.Sprintf("want a number in [1, %d]", MaxClientBurst)))
	}
	return errs
}
