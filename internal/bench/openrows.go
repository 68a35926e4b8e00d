package bench

import (
	"context"
	"fmt"
	"math"
	"time"
)

// warmIndexKey counts the index fetches of WarmImage.
var warmIndexKey = RequestKey{Repo: WarmImage, Kind: KindTagManifest, Tag: "v1"}

// openLoopHooks are the open-loop variants, in the order of the first run;
// later runs rotate it.
var openLoopHooks = []Hook{NoHook, Noop, Isamatch, GatePath}

// openLoopPods is how many pods one open-loop load creates.
func (o Options) openLoopPods() int {
	return max(1, int(math.Round(o.OpenRate*o.OpenDuration.Seconds())))
}

// openLoopRows measures admission latency under a fixed rate well below
// saturation, without a webhook, with the no-op webhook and with
// isamatch's, by the sync and the gate path.
func openLoopRows(ctx context.Context, e *Env, o Options, t *Table) error {
	if err := warmUp(ctx, e, o, "open", openLoopHooks, 100); err != nil {
		return err
	}
	n := o.openLoopPods()
	figs := map[Hook]*hookFigures{}
	for _, h := range openLoopHooks {
		figs[h] = &hookFigures{}
	}
	var sent, failed, fetches int
	var lag time.Duration
	var addedP50, addedP99 []float64
	for r := range o.Runs {
		for _, h := range rotated(openLoopHooks, r) {
			ns := nsName("open", h)
			if err := e.Namespace(ctx, ns, h); err != nil {
				return err
			}
			before := e.Proxy.Snapshot()
			res, err := OpenLoop(ctx, e.Clientset, loadPods(ns, fmt.Sprintf("r%d", r), e.Ref(WarmImage, "v1"), Unscheduled, n), o.OpenRate)
			if err != nil {
				return fmt.Errorf("webhook=%s: %w", h, err)
			}
			if err := DeletePods(ctx, e.Clientset, ns); err != nil {
				return err
			}
			// The warm image's index fetched again during the load: its
			// cache entry expired (--cache-ttl) and admissions waited for
			// the registry.
			fetched := e.Proxy.Snapshot()[warmIndexKey] - before[warmIndexKey]
			sent, failed, lag, fetches = sent+res.Sent, failed+res.Failed, max(lag, res.MaxLag), fetches+fetched
			p50, p99 := ms(Percentile(res.Latencies, 0.5)), ms(Percentile(res.Latencies, 0.99))
			f := figs[h]
			f.p50, f.p99 = append(f.p50, p50), append(f.p99, p99)
			fmt.Fprintf(e.progress, "bench:   run %d webhook=%s, %g pods/s: p50 %.1f ms p99 %.1f ms (lag %.1f ms, %d index fetches)\n",
				r+1, h, o.OpenRate, p50, p99, ms(res.MaxLag), fetched)
		}
		w, fl := figs[Isamatch], figs[Noop]
		addedP50, addedP99 = append(addedP50, w.p50[r]-fl.p50[r]), append(addedP99, w.p99[r]-fl.p99[r])
	}
	const sec = "7 open loop"
	load := fmt.Sprintf("%g pods/s for %s (%d pods)", o.OpenRate, o.OpenDuration, n)
	names := map[Hook]string{
		NoHook:   "without webhook: p50 / p99, " + load,
		Noop:     "no-op webhook: p50 / p99",
		Isamatch: "isamatch, --resolve=sync (warm image cache): p50 / p99",
		GatePath: "isamatch, admission.resolve: gate (every pod gated at admission, released by the gate controller): p50 / p99",
	}
	for _, h := range openLoopHooks {
		f := figs[h]
		t.Add(Row{Section: sec, Name: names[h], Figure: fmt.Sprintf("%.1f / %.1f ms", Median(f.p50), Median(f.p99)),
			Verdict: Info, Runs: "p99 " + runsText("%.1f", f.p99)})
	}
	t.Add(Row{Section: sec, Name: "isamatch (sync) over the no-op webhook: added p50 / p99 (same run)",
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(addedP50), Median(addedP99)), Verdict: Info,
		Runs: "p99 " + runsText("%.1f", addedP99)})
	t.Add(Row{Section: sec, Name: "creates sent / failed; the generator's largest lag behind schedule (counted in the latencies)",
		Figure: fmt.Sprintf("%d / %d; %.1f ms", sent, failed, ms(lag)), Verdict: Info})
	t.Add(Row{Section: sec, Name: "index fetches of the warm image during the loads (its cache entry expired: admissions waited for the registry)",
		Figure: fmt.Sprintf("%d", fetches), Verdict: Info})
	return nil
}
