package engine

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// HasGate reports whether gates hold isa.ResolveGate: the pod waits for
// the gate controller to resolve its images and release it, so tools that
// judge a pod's placement leave it alone until then.
func HasGate(gates []corev1.PodSchedulingGate) bool {
	return slices.ContainsFunc(gates, func(g corev1.PodSchedulingGate) bool { return g.Name == isa.ResolveGate })
}
