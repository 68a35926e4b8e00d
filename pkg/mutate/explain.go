package mutate

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Explain returns the readable line of the decision for pod, made again
// as admission makes it: the pod's request and images, the images'
// platforms (from the resolver's cache, else looked up until ctx ends or
// the budget is spent), what was read of their binaries (the cache alone:
// nothing is read here), and the inventory now. The pod stores only the
// decision's numbers (contract.DecisionCounts); this line is what its
// IsamatchDecided Event carries. Nodes that joined or left since admission
// count as they are now.
func (p *PodMutator) Explain(ctx context.Context, pod *corev1.Pod) string {
	f := fieldsOf(pod)
	in, _, msg := p.podInput(f)
	if msg != "" {
		return sanitize.Line("denied: "+msg, maxAnnotation)
	}
	refs := podImages(f)
	if len(refs) > MaxImages {
		return "denied: " + tooManyImages()
	}
	auth := pullAuth(pod.Namespace, f)
	images := p.resolve(ctx, auth, refs)
	if p.infers(in) {
		p.infer(ctx, auth, images, false) // the cache alone
	}
	in.Images = engineImages(images)
	c, err := contract.ParseDecision(pod.Annotations)
	if err == nil && c.Fallback != "" {
		in.Fallback = p.opts.FallbackArchitecture
	}
	summary := p.m.Decide(in, p.inv.Snapshot()).Summary
	if err == nil && c.Emulator != nil {
		// What admission set in the containers, which cannot change.
		summary += "; " + engine.EmulatorClause(*c.Emulator)
	}
	return sanitize.Line(summary, maxAnnotation)
}
