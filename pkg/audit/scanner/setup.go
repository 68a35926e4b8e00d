package scanner

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Options configures Setup.
type Options struct {
	WebhookConfig  string
	SkipNamespaces []string
	GateTimeout    time.Duration
	Interval       time.Duration
	Metrics        *Metrics
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
}

// Setup adds a Scanner of pods and inv to mgr, on the elected leader only.
func Setup(mgr manager.Manager, pods PodSource, inv Inventory, o Options) error {
	s := &Scanner{
		Pods: pods, Inventory: inv, Cache: mgr.GetCache(), API: mgr.GetAPIReader(),
		WebhookConfig: o.WebhookConfig, SkipNamespaces: o.SkipNamespaces, GateTimeout: o.GateTimeout,
		Metrics: o.Metrics, Interval: o.Interval, Keys: o.Keys, Log: mgr.GetLogger().WithName("audit"),
	}
	if err := mgr.Add(s); err != nil {
		return fmt.Errorf("add audit: %w", err)
	}
	return nil
}
