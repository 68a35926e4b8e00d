package webhookconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *v1alpha1.WebhookConfiguration)
		want   string // "": valid
	}{
		{name: "defaults", change: func(*v1alpha1.WebhookConfiguration) {}},
		{name: "negative gate timeout", change: func(c *v1alpha1.WebhookConfiguration) { c.Gate.Timeout.Duration = -time.Second },
			want: `gate.timeout: Invalid value: "-1s": want a duration in (0, 10m]`},
		{name: "attempt over the gate timeout", change: func(c *v1alpha1.WebhookConfiguration) { c.Gate.Attempt.Duration = time.Minute },
			want: `gate.attempt: Invalid value: "1m0s": want a duration in (0, 20s] (gate.timeout)`},
		{name: "unknown enforcement", change: func(c *v1alpha1.WebhookConfiguration) { c.Admission.Enforcement = "audit" },
			want: `admission.enforcement: Invalid value: "audit": want deny or warn`},
		{name: "insecure registry with a scheme", change: func(c *v1alpha1.WebhookConfiguration) {
			c.Registry.InsecureRegistries = []string{"lab:80", "http://lab:80"}
		},
			want: `registry.insecureRegistries[1]: Invalid value: "http://lab:80"`},
		{name: "malformed mirror", change: func(c *v1alpha1.WebhookConfiguration) { c.Registry.Mirrors = []string{"mirror.local"} },
			want: `registry.mirrors: Invalid value: mirror "mirror.local": want REGISTRY=MIRROR`},
		{name: "eviction without the watcher", change: func(c *v1alpha1.WebhookConfiguration) { c.Misplacement.Evict, c.Misplacement.Events = true, false },
			want: "misplacement.evict: Invalid value: true: needs misplacement.events"},
		{name: "no eviction grace", change: func(c *v1alpha1.WebhookConfiguration) { c.Misplacement.EvictGrace.Duration = 0 }},
		{name: "eviction grace too long", change: func(c *v1alpha1.WebhookConfiguration) { c.Misplacement.EvictGrace.Duration = time.Hour },
			want: `misplacement.evictGrace: Invalid value: "1h0m0s": want a duration in [0, 10m]`},
		{name: "client rate limit", change: func(c *v1alpha1.WebhookConfiguration) { c.ClientConnection.QPS, c.ClientConnection.Burst = 0.5, 1 }},
		{name: "no client QPS", change: func(c *v1alpha1.WebhookConfiguration) { c.ClientConnection.QPS = 0 },
			want: `clientConnection.qps: Invalid value: 0: want requests per second in (0, 1000]`},
		{name: "client QPS too high", change: func(c *v1alpha1.WebhookConfiguration) { c.ClientConnection.QPS = 5000 },
			want: `clientConnection.qps: Invalid value: 5000: want requests per second in (0, 1000]`},
		{name: "Events paced slower", change: func(c *v1alpha1.WebhookConfiguration) { c.Events.QPS, c.Events.Burst = 0.5, 1 }},
		{name: "no Events QPS", change: func(c *v1alpha1.WebhookConfiguration) { c.Events.QPS = 0 },
			want: `events.qps: Invalid value: 0: want Events per second in (0, 1000]`},
		{name: "Events QPS too high", change: func(c *v1alpha1.WebhookConfiguration) { c.Events.QPS = 5000 },
			want: `events.qps: Invalid value: 5000: want Events per second in (0, 1000]`},
		{name: "no Events burst", change: func(c *v1alpha1.WebhookConfiguration) { c.Events.Burst = 0 },
			want: `events.burst: Invalid value: 0: want a number in [1, 2000]`},
		{name: "client burst too low", change: func(c *v1alpha1.WebhookConfiguration) { c.ClientConnection.Burst = 0 },
			want: `clientConnection.burst: Invalid value: 0: want a number in [1, 2000]`},
		{name: "negative eviction grace", change: func(c *v1alpha1.WebhookConfiguration) { c.Misplacement.EvictGrace.Duration = -time.Second },
			want: `misplacement.evictGrace: Invalid value: "-1s": want a duration in [0, 10m]`},
		{name: "zero cache", change: func(c *v1alpha1.WebhookConfiguration) { c.Registry.CacheBytes = 0 },
			want: "registry.cacheBytes: Invalid value: 0: want a number >= 1"},
		{name: "port", change: func(c *v1alpha1.WebhookConfiguration) { c.Server.Port = 0 }, want: "server.port: Invalid value: 0: want 1..65535"},
		{name: "shutdown delay as shipped", change: func(c *v1alpha1.WebhookConfiguration) { c.Server.ShutdownDelay.Duration = 10 * time.Second }},
		{name: "shutdown delay past the grace period", change: func(c *v1alpha1.WebhookConfiguration) { c.Server.ShutdownDelay.Duration = 2 * time.Minute },
			want: `server.shutdownDelay: Invalid value: "2m0s": want a duration in [0, 1m]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.change(&c)
			errs := Validate(&c)
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("Validate() = %v, want no error", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("Validate() = %v, want one error mentioning %q", errs, tc.want)
			}
		})
	}
}
