package bench

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// AnnotatePath is where internal/bench/noopwebhook answers every pod with
// a patch adding AnnotateKey=AnnotateValue and nothing else: the least any
// mutation writes.
const AnnotatePath = "/annotate-v1-pod"

// The annotation AnnotatePath adds.
const (
	AnnotateKey   = "bench.isamatch.io/m"
	AnnotateValue = "1"
)

// checkAnnotate creates the request mix as dry runs through no webhook and
// through hook Annotate, and checks that each pod of the second is the
// first with the one annotation added: a broken path would otherwise be
// measured as a free mutation. The mix holds pods with and without
// annotations, so both shapes of the patch are checked.
func checkAnnotate(ctx context.Context, e *Env) error {
	plain, err := dryRunMix(ctx, e, NoHook)
	if err != nil {
		return err
	}
	got, err := dryRunMix(ctx, e, Annotate)
	if err != nil {
		return err
	}
	for i := range got {
		if d := annotateDiff(plain[i], got[i]); d != "" {
			return fmt.Errorf("the annotate webhook does not add only %s=%s for request %q: %s", AnnotateKey, AnnotateValue, requestMix[i], d)
		}
	}
	return nil
}

// annotateDiff reports how got differs from plain with the one annotation
// added, in what a webhook writes here (annotations and node affinity), or
// "" when it does not.
func annotateDiff(plain, got *corev1.Pod) string {
	want := plain.DeepCopy()
	want.Annotations = maps.Clone(want.Annotations)
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[AnnotateKey] = AnnotateValue
	return sameWrites(want, got)
}
