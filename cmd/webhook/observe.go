package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// registerMetrics registers what the webhook exports beside
// controller-runtime's own metrics (controller_runtime_webhook_*, ...):
// isamatch_build_info, isamatch_registry_* and isamatch_webhook_*.
func registerMetrics(reg prometheus.Registerer) (*registry.Metrics, *mutate.Metrics, error) {
	if err := reg.Register(buildinfo.Read().Collector()); err != nil {
		return nil, nil, fmt.Errorf("register build info: %w", err)
	}
	regMetrics := registry.NewMetrics()
	if err := regMetrics.Register(reg); err != nil {
		return nil, nil, fmt.Errorf("register registry metrics: %w", err)
	}
	mutMetrics := mutate.NewMetrics()
	for _, c := range mutMetrics.Collectors() {
		if err := reg.Register(c); err != nil {
			return nil, nil, fmt.Errorf("register webhook metrics: %w", err)
		}
	}
	return regMetrics, mutMetrics, nil
}
