package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/metrics"
	"github.com/isamatch/isamatch/pkg/audit/scanner"
	"github.com/isamatch/isamatch/pkg/gate"
	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/misplace/watch"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/podevents"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/registry/credprov"
)

// webhookMetrics are the collectors registerMetrics registered.
type webhookMetrics struct {
	registry  *registry.Metrics
	credprov  *credprov.Metrics
	mutate    *mutate.Metrics
	gate      *gate.Metrics
	misplace  *watch.Metrics
	audit     *scanner.Metrics
	podevents *podevents.Metrics
}

// registerMetrics registers what the webhook exports beside
// controller-runtime's own metrics (controller_runtime_webhook_*, ...):
// isamatch_build_info, isamatch_registry_* (the credential providers'
// isamatch_registry_credential_provider_* among them), isamatch_webhook_*
// (the gate controller's isamatch_webhook_gate_* among them), the
// misplacement watcher's and the audit's.
func registerMetrics(reg prometheus.Registerer) (*webhookMetrics, error) {
	if err := reg.Register(buildinfo.Read().Collector()); err != nil {
		return nil, fmt.Errorf("register build info: %w", err)
	}
	m := &webhookMetrics{registry: registry.NewMetrics(), credprov: credprov.NewMetrics(), mutate: mutate.NewMetrics(), gate: gate.NewMetrics(),
		misplace: watch.NewMetrics(), audit: scanner.NewMetrics(), podevents: podevents.NewMetrics()}
	for _, set := range []struct {
		what string
		cs   []prometheus.Collector
	}{
		{"registry metrics", m.registry.Collectors()},
		{"credential provider metrics", m.credprov.Collectors()},
		{"webhook metrics", m.mutate.Collectors()},
		{"gate controller metrics", m.gate.Collectors()},
		{"misplacement metrics", m.misplace.Collectors()},
		{"audit metrics", m.audit.Collectors()},
		{"pod event metrics", m.podevents.Collectors()},
	} {
		if err := metrics.Register(reg, set.what, set.cs...); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// inferCacheBytes bounds the ELF inference cache: an outcome is a few
// hundred bytes, so this holds tens of thousands of image digests.
const inferCacheBytes = 16 << 20

// newInferrer returns the ELF inference the gate controller runs (nil with
// admission.resolve sync or inference.elf false) and registers its isamatch_elf_*
// metrics.
func newInferrer(reg prometheus.Registerer, res *registry.Resolver, o options) (mutate.PlatformInferrer, error) {
	if !o.inferELF || o.resolve == mutate.ResolveSync {
		return nil, nil
	}
	m := imageisa.NewMetrics()
	if err := metrics.Register(reg, "ELF inference metrics", m.Collectors()...); err != nil {
		return nil, err
	}
	in := imageisa.NewInferrer(imageisa.Options{
		Limits:     imageisa.Limits{MaxBytes: o.inferMaxBytes, Timeout: o.inferTimeout},
		CacheBytes: inferCacheBytes,
		Metrics:    m,
	})
	return imageisa.NewPlatforms(in, res), nil
}
