package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// AdmissionBatches is how many batches a run cuts each admission variant's
// pods into. The variants' batches alternate, so that a slow second of a
// shared machine falls on every variant alike rather than on whichever
// variant happened to run then: whole 1,000-pod loads one after another
// gave ratios from 0.5 to 1.2 for the same code in one run.
const AdmissionBatches = 5

// variant is one closed-loop admission load: its name in progress lines,
// the hook its namespace goes through, and the pods it creates.
type variant struct {
	name string
	hook Hook
	// pods returns n pods named prefix-NNNN in ns.
	pods func(ns, prefix string, n int) []*corev1.Pod
}

// around is called before (start) and after each batch of a variant.
type around func(v variant, start bool) error

// runInterleaved runs one run r: every variant's pods in AdmissionBatches
// batches, the batches interleaved and their order rotated from batch to
// batch. A batch is created by clients concurrent creators and deleted
// before the next starts. It returns each variant's creations joined: all
// latencies, and the time spent creating them.
func runInterleaved(ctx context.Context, e *Env, pods, clients int, vs []variant, r int, hook around) ([]LoadResult, error) {
	out := make([]LoadResult, len(vs))
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	for b := range AdmissionBatches {
		n := batchSize(pods, AdmissionBatches, b)
		if n == 0 {
			continue
		}
		for _, i := range rotatedInts(order, r*AdmissionBatches+b) {
			v := vs[i]
			ns := nsName("adm", v.hook)
			if err := e.Namespace(ctx, ns, v.hook); err != nil {
				return nil, err
			}
			if hook != nil {
				if err := hook(v, true); err != nil {
					return nil, err
				}
			}
			res, err := CreatePods(ctx, e.Clientset, v.pods(ns, fmt.Sprintf("r%db%d", r, b), n), clients)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			if err := DeletePods(ctx, e.Clientset, ns); err != nil {
				return nil, err
			}
			if hook != nil {
				if err := hook(v, false); err != nil {
					return nil, err
				}
			}
			out[i] = out[i].join(res)
		}
	}
	return out, nil
}

// batchSize is the size of batch b when n pods are cut into k batches:
// the first n%k batches take one more.
func batchSize(n, k, b int) int {
	s := n / k
	if b < n%k {
		s++
	}
	return s
}

// rotatedInts is xs rotated left by r.
func rotatedInts(xs []int, r int) []int {
	k := r % len(xs)
	return append(append([]int(nil), xs[k:]...), xs[:k]...)
}

// join is r and s as one load: both latencies, both times spent.
func (r LoadResult) join(s LoadResult) LoadResult {
	if r.Start.IsZero() || (!s.Start.IsZero() && s.Start.Before(r.Start)) {
		r.Start = s.Start
	}
	r.Latencies = append(r.Latencies, s.Latencies...)
	r.Elapsed += s.Elapsed
	return r
}
