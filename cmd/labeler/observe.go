package main

import (
	"context"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/metrics"
	"github.com/isamatch/isamatch/pkg/gate/unresolved"
	"github.com/isamatch/isamatch/pkg/isa"
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

// runPrune removes isamatch's keys from every node and releases every pod
// still held by isamatch's scheduling gate (no gate controller will once
// isamatch is gone), and prints one line per node and pod it changed.
func runPrune(ctx context.Context, o options, stdout io.Writer) error {
	c, err := newClient(o.kubeconfig)
	if err != nil {
		return err
	}
	pruned, pruneErr := labeler.Prune(ctx, c)
	for _, p := range pruned {
		fmt.Fprintf(stdout, "node %s: removed %d labels, %d annotations\n", p.Node, p.Labels, p.Annotations)
	}
	released, releaseErr := unresolved.ReleaseAll(ctx, c, "isamatch was uninstalled (labeler --prune)")
	for _, p := range released {
		fmt.Fprintf(stdout, "pod %s: released from the scheduling gate %s\n", p, isa.ResolveGate)
	}
	logr.FromContextOrDiscard(ctx).Info("nodes pruned, gated pods released", "nodes", len(pruned), "pods", len(released))
	if pruneErr != nil {
		return fmt.Errorf("prune: %w", pruneErr)
	}
	if releaseErr != nil {
		return fmt.Errorf("release gated pods: %w", releaseErr)
	}
	return nil
}
