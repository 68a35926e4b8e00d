package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// OpenLoopResult is one open-loop load.
type OpenLoopResult struct {
	// Latencies of the creates that succeeded, each from the time the
	// create was due, not from when it was sent: a generator that fell
	// behind counts its delay too, so a stall is not hidden (no
	// coordinated omission).
	Latencies []time.Duration
	// Sent is how many creates were sent; Failed how many failed.
	Sent, Failed int
	// MaxLag is the largest delay between a create's due time and its
	// sending: how far the generator itself fell behind.
	MaxLag time.Duration
	// Elapsed is from the first due time to the last answer.
	Elapsed time.Duration
}

// OpenLoop creates pods at a fixed rate (pods per second), the i-th at
// start + i/rate whatever the earlier creates are doing: an open-loop
// load, as independent users would send it, unlike CreatePods, whose
// clients wait for each answer. It returns when every create has
// answered; the first error is returned with the result.
func OpenLoop(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod, rate float64) (OpenLoopResult, error) {
	if rate <= 0 {
		return OpenLoopResult{}, fmt.Errorf("open-loop rate %v: want pods per second > 0", rate)
	}
	interval := time.Duration(float64(time.Second) / rate)
	var (
		res      OpenLoopResult
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
send:
	for i, p := range pods {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break send
			}
		}
		res.MaxLag = max(res.MaxLag, time.Since(due))
		res.Sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			d := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Failed++
				if firstErr == nil {
					firstErr = fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
				}
				return
			}
			res.Latencies = append(res.Latencies, d)
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if firstErr != nil {
		return res, firstErr
	}
	return res, ctx.Err()
}
