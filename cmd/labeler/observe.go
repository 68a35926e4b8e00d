package main

import (
	"context"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/metrics"
	"github.com/isamatch/isamatch/pkg/labeler"
)

// registerMetrics registers what the labeler exports beside
// controller-runtime's own metrics: isamatch_build_info and the
// isamatch_labeler_* collectors.
func registerMetrics(reg prometheus.Registerer, m *labeler.Metrics) error {
	if err := reg.Register(buildinfo.Read().Collector()); err != nil {
		return fmt.Errorf("register build info: %w", err)
	}
	return metrics.Register(reg, "labeler metrics", m.Collectors()...)
}

// runPrune removes isamatch's keys from every node and prints one line per
// node it changed.
func runPrune(ctx context.Context, o options, stdout io.Writer) error {
	c, err := newClient(o.kubeconfig)
	if err != nil {
		return err
	}
	pruned, err := labeler.Prune(ctx, c)
	for _, p := range pruned {
		fmt.Fprintf(stdout, "node %s: removed %d labels, %d annotations\n", p.Node, p.Labels, p.Annotations)
	}
	logr.FromContextOrDiscard(ctx).Info("nodes pruned", "nodes", len(pruned))
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	return nil
}
