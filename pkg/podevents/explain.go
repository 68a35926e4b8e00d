package podevents

import (
	"context"
	"time"

	"github.com/isamatch/isamatch/pkg/contract"
	corev1 "k8s.io/api/core/v1"
)

// Explainer returns the readable line of the decision made for pod, or ""
// when it cannot tell; it returns soon after ctx ends. It may look images
// up in their registries (a replica other than the one that admitted the
// pod has not seen them), which is why it runs off the informer's
// goroutine.
type Explainer func(ctx context.Context, pod *corev1.Pod) string

// Bounds of the explaining.
const (
	// ExplainWorkers is how many decisions are explained at once.
	ExplainWorkers = 2
	// ExplainBudget bounds one explanation; past it the Event carries
	// what the explainer had (or the numbers alone).
	ExplainBudget = 5 * time.Second
	// explainQueue bounds the pods waiting; past it a pod's Event is
	// recorded at once with the numbers alone, so a burst of pods never
	// piles up memory or delays their Events without bound.
	explainQueue = 1024
)

// explainer runs an Explainer on a few workers for a Reporter.
type explainer struct {
	fn   Explainer
	jobs chan explainJob
	done <-chan struct{}
}

type explainJob struct {
	pod *corev1.Pod
	c   contract.DecisionCounts
}

// Explain makes r record each decided pod's IsamatchDecided Event with
// the line fn gives, on ExplainWorkers goroutines that run until ctx ends.
// Call it once, before r observes pods.
func (r *Reporter) Explain(ctx context.Context, fn Explainer) {
	e := &explainer{fn: fn, jobs: make(chan explainJob, explainQueue), done: ctx.Done()}
	for range ExplainWorkers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-e.jobs:
					jctx, cancel := context.WithTimeout(ctx, ExplainBudget)
					line := fn(jctx, j.pod)
					cancel()
					r.recordDecided(j.pod, j.c, line)
				}
			}
		}()
	}
	r.explain = e
}

// submit queues pod for explaining; false when the queue is full or the
// workers have stopped.
func (e *explainer) submit(pod *corev1.Pod, c contract.DecisionCounts) bool {
	select {
	case <-e.done:
		return false
	default:
	}
	select {
	case e.jobs <- explainJob{pod: pod, c: c}:
		return true
	default:
		return false
	}
}
