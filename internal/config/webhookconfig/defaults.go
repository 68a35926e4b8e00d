package webhookconfig

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/audit/scanner"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/gate"
	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/misplace/watch"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/podevents"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/registry/credprov"
)

// Default is the webhook's configuration when no file sets
// anything: the one source of its defaults.
func Default() v1alpha1.WebhookConfiguration {
	return v1alpha1.WebhookConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.WebhookConfigurationKind},
		Server: v1alpha1.WebhookServer{
			Port:    9443,
			CertDir: "/tmp/k8s-webhook-server/serving-certs",
		},
		Metrics: v1alpha1.Metrics{BindAddress: ":8080", Secure: true, TokenAudience: metricsauth.DefaultAudience},
		Health:  v1alpha1.Health{BindAddress: ":8081"},
		Admission: v1alpha1.Admission{
			Enforcement:          mutate.EnforcementDeny,
			NamespaceEnforcement: []string{mutate.EnforcementDeny, mutate.EnforcementWarn},
			Resolve:              mutate.ResolveAuto,
			Budget:               metav1.Duration{Duration: mutate.DefaultBudget},
			BareKeys:             true,
			QEMUCPU:              v1alpha1.QEMUCPUInject,
		},
		Registry: v1alpha1.Registry{
			MaxPerHost:       registry.DefaultMaxPerHost,
			MaxPerNamespace:  registry.DefaultMaxPerNamespace,
			MaxIndexEntries:  registry.DefaultMaxIndexEntries,
			MaxBytes:         registry.DefaultMaxResolutionBytes,
			CacheBytes:       registry.DefaultMaxCacheBytes,
			DigestCacheBytes: registry.DefaultMaxDigestCacheBytes,
			CacheTTL:         metav1.Duration{Duration: registry.DefaultTTL},
		},
		CredentialProviders: v1alpha1.CredentialProviders{
			Timeout:             metav1.Duration{Duration: credprov.DefaultTimeout},
			MaxRuns:             credprov.DefaultMaxRuns,
			MaxRunsPerNamespace: credprov.DefaultMaxRunsPerNamespace,
		},
		Gate: v1alpha1.Gate{
			Controller: true,
			Timeout:    metav1.Duration{Duration: gate.DefaultTimeout},
			Workers:    gate.DefaultWorkers,
			Attempt:    metav1.Duration{Duration: gate.DefaultAttempt},
		},
		Inference: v1alpha1.Inference{
			ELF:      true,
			MaxBytes: imageisa.DefaultLimits.MaxBytes,
			Timeout:  metav1.Duration{Duration: imageisa.DefaultLimits.Timeout},
		},
		LeaderElection: v1alpha1.LeaderElection{Enabled: true},
		Events:         v1alpha1.Events{Pods: true, QPS: podevents.DefaultQPS, Burst: podevents.DefaultBurst},
		Misplacement:   v1alpha1.Misplacement{Events: true, EvictGrace: metav1.Duration{Duration: watch.DefaultEvictGrace}},
		Audit:          v1alpha1.Audit{Interval: metav1.Duration{Duration: scanner.DefaultInterval}},
		// Kueue's defaults; client-go's own (5, 10) and controller-runtime's
		// (20, 30) hold a leader that releases and reports on hundreds of
		// pods a second to a fraction of that.
		ClientConnection: v1alpha1.ClientConnection{QPS: 50, Burst: 100},
	}
}
