package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBatchSize(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{1000, 5}, {1003, 5}, {3, 5}, {0, 5}, {7, 1}} {
		sum := 0
		var sizes []int
		for b := range tc.k {
			sizes = append(sizes, batchSize(tc.n, tc.k, b))
			sum += sizes[b]
		}
		if sum != tc.n {
			t.Errorf("batchSize(%d, %d, *) = %v, sum %d; want sum %d", tc.n, tc.k, sizes, sum, tc.n)
		}
		for _, s := range sizes {
			if s < sizes[len(sizes)-1] || s > sizes[len(sizes)-1]+1 {
				t.Errorf("batchSize(%d, %d, *) = %v: uneven", tc.n, tc.k, sizes)
			}
		}
	}
}

func TestInterleavedOrderSpreadsVariants(t *testing.T) {
	// Over a run's batches every variant runs in every position, so that
	// no variant always follows the same neighbour.
	const variants = 3
	first := map[int]int{}
	for b := range AdmissionBatches * variants {
		first[rotatedInts([]int{0, 1, 2}, b)[0]]++
	}
	if diff := cmp.Diff(map[int]int{0: AdmissionBatches, 1: AdmissionBatches, 2: AdmissionBatches}, first); diff != "" {
		t.Errorf("first variant of each batch (-want +got):\n%s", diff)
	}
}

func TestJoin(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := LoadResult{Latencies: []time.Duration{1, 2}, Elapsed: time.Second, Start: t0.Add(time.Second)}
	b := LoadResult{Latencies: []time.Duration{3}, Elapsed: 2 * time.Second, Start: t0}
	got := LoadResult{}.join(a).join(b)
	want := LoadResult{Latencies: []time.Duration{1, 2, 3}, Elapsed: 3 * time.Second, Start: t0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("join (-want +got):\n%s", diff)
	}
	if got.PodsPerSecond() != 1 {
		t.Errorf("PodsPerSecond = %v, want 1 (3 pods in 3 s of creating)", got.PodsPerSecond())
	}
}
