package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// scaleVariant is what one variant of the scale load measured: admission
// latencies of every pod, creation and scheduling throughput per batch.
type scaleVariant struct {
	latencies         []time.Duration
	created, schedule []float64 // pods/s per batch
	fitCount
	bytes float64 // mean protobuf size of a sampled pod
}

type scaleResult struct{ with, without scaleVariant }

// scaleLoad creates o.Pods pods through isamatch's webhook and o.Pods
// through none, in o.Batches batches each, alternating (the order turns
// every batch). A batch is created held by HoldGate, so admission is
// measured alone, then released and timed until every pod is bound: the
// scheduler alone. The pods stay, so later batches meet fuller nodes.
func scaleLoad(ctx context.Context, e *Env, o ScaleOptions, native map[string]isa.ISA) (scaleResult, error) {
	var res scaleResult
	per := o.Pods / o.Batches
	for _, with := range []bool{true, false} {
		if err := e.Namespace(ctx, scaleNS(with), hookOf(with)); err != nil {
			return res, err
		}
	}
	watch := map[bool]*BindWatcher{}
	for _, with := range []bool{true, false} {
		w, err := WatchBinds(ctx, e.Clientset, scaleNS(with))
		if err != nil {
			return res, err
		}
		defer w.Stop()
		watch[with] = w
	}
	for b := range o.Batches {
		order := []bool{true, false}
		if b%2 == 1 {
			order = []bool{false, true}
		}
		for _, with := range order {
			v := &res.without
			if with {
				v = &res.with
			}
			pods := make([]*corev1.Pod, per)
			for k := range per {
				i := b*per + k
				pods[k] = LoadPod(scaleNS(with), fmt.Sprintf("p-%06d", i), e.Ref(WarmImage, "v1"), "", i)
			}
			if err := OwnByReplicaSets(ctx, e.Clientset, scaleNS(with), pods); err != nil {
				return res, err
			}
			load, err := CreatePods(ctx, e.Clientset, Gate(pods), o.Clients)
			if err != nil {
				return res, err
			}
			first, err := Ungate(ctx, e.Clientset, pods, o.Clients)
			if err != nil {
				return res, err
			}
			last, err := watch[with].Wait(ctx, (b+1)*per, 15*time.Minute)
			if err != nil {
				return res, fmt.Errorf("batch %d, webhook=%v: %w\n%s", b+1, with, err, e.CP.SchedulerLogTail(10))
			}
			v.latencies = append(v.latencies, load.Latencies...)
			v.created = append(v.created, load.PodsPerSecond())
			v.schedule = append(v.schedule, float64(per)/last.Sub(first).Seconds())
			fmt.Fprintf(e.progress, "bench:   batch %d/%d webhook=%v: created %.0f pods/s (p50 %s), scheduled %.0f pods/s\n",
				b+1, o.Batches, with, load.PodsPerSecond(), Percentile(load.Latencies, 0.5).Round(time.Microsecond), v.schedule[len(v.schedule)-1])
		}
	}
	for _, with := range []bool{true, false} {
		v := &res.without
		if with {
			v = &res.with
		}
		if err := judge(ctx, e, scaleNS(with), native, &v.fitCount); err != nil {
			return res, err
		}
		size, err := meanStoredSize(ctx, e, scaleNS(with), o.Sample)
		if err != nil {
			return res, err
		}
		v.bytes = size
	}
	return res, nil
}

func scaleNS(with bool) string { return "scale-" + string(hookOf(with)) }

// meanStoredSize reads n pods of ns as the API server encodes them for
// etcd (protobuf) and returns their mean size.
func meanStoredSize(ctx context.Context, e *Env, ns string, n int) (float64, error) {
	list, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: int64(n)})
	if err != nil {
		return 0, fmt.Errorf("list pods of %s: %w", ns, err)
	}
	if len(list.Items) == 0 {
		return 0, fmt.Errorf("no pod in %s to size", ns)
	}
	total := 0
	for _, p := range list.Items {
		raw, err := e.Clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(p.Name).
			SetHeader("Accept", "application/vnd.kubernetes.protobuf").DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("get pod %s/%s as protobuf: %w", ns, p.Name, err)
		}
		total += len(raw)
	}
	return float64(total) / float64(len(list.Items)), nil
}

// rows adds the load's rows to t.
func (r scaleResult) rows(t *Table, o ScaleOptions) {
	w, n := r.with, r.without
	p50w, p50n := Percentile(w.latencies, 0.5), Percentile(n.latencies, 0.5)
	p99w, p99n := Percentile(w.latencies, 0.99), Percentile(n.latencies, 0.99)
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("admission p50 / p99, %d pods through isamatch (no webhook: %s / %s)", len(w.latencies), p50n.Round(time.Microsecond), p99n.Round(time.Microsecond)),
		Figure: fmt.Sprintf("%s / %s (+%s / +%s)", p50w.Round(time.Microsecond), p99w.Round(time.Microsecond), (p50w - p50n).Round(time.Microsecond), (p99w - p99n).Round(time.Microsecond)),
		Goal:   "measured", Verdict: Info})
	t.Add(Row{Section: "4 scale", Name: "pod creation throughput, isamatch / no webhook (median of batches)",
		Figure: fmt.Sprintf("%.0f / %.0f pods/s = %.2f", Median(w.created), Median(n.created), Median(w.created)/Median(n.created)),
		Goal:   "measured", Verdict: Info, Runs: runsText("%.0f", w.created)})
	ratio := Median(w.schedule) / Median(n.schedule)
	t.Add(Row{Section: "4 scale", Name: "scheduling throughput with isamatch's affinity / without (median of batches)",
		Figure: fmt.Sprintf("%.0f / %.0f pods/s = %.2f", Median(w.schedule), Median(n.schedule), ratio),
		Goal:   ">= 0.95", Verdict: verdict(ratio >= 0.95), Runs: runsText("%.0f", w.schedule)})
	added := w.bytes - n.bytes
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("bytes a pod gains in etcd (protobuf, mean of %d pods each; the same pod without isamatch: %.0f)", o.Sample, n.bytes),
		Figure: fmt.Sprintf("%.0f", added), Goal: "<= 600", Verdict: verdict(added <= 600)})
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("pods on a node that can run them (oracle), %d pods; without isamatch: %.1f%%", w.pods, pct(n.correct, n.pods)),
		Figure: fmt.Sprintf("%.2f%%", pct(w.correct, w.pods)), Goal: "100%", Verdict: verdict(w.correct == w.pods)})
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("pods on a best-fit node (oracle); without isamatch: %.1f%%", pct(n.bestFit, n.eligible)),
		Figure: fmt.Sprintf("%.2f%%", pct(w.bestFit, w.eligible)), Goal: ">= 99%", Verdict: verdict(pct(w.bestFit, w.eligible) >= 99)})
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
