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
// later runs rotate it. Annotate (the least any patch writes) and Replay
// (isamatch's recorded patch, no decision) split isamatch's added latency
// as the admission section splits its throughput.
var openLoopHooks = []Hook{NoHook, Noop, Annotate, Replay, Isamatch, GatePath}

// openLoopSplits are the added latencies reported, each over the variant
// that writes one thing less, in the same run.
var openLoopSplits = []struct {
	over, base Hook
	name       string
}{
	{Isamatch, Noop, "isamatch (sync) over the no-op webhook: added p50 / p99 (same run)"},
	{Annotate, Noop, "one annotation over the no-op webhook (any patch at all): added p50 / p99"},
	{Replay, Annotate, "replay over one annotation (isamatch's patch beyond any patch): added p50 / p99"},
	{Isamatch, Replay, "isamatch over the replay (its decision): added p50 / p99"},
}

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
	added := make([]struct{ p50, p99 []float64 }, len(openLoopSplits))
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
		for i, sp := range openLoopSplits {
			w, fl := figs[sp.over], figs[sp.base]
			added[i].p50, added[i].p99 = append(added[i].p50, w.p50[r]-fl.p50[r]), append(added[i].p99, w.p99[r]-fl.p99[r])
		}
	}
	const sec = "7 open loop"
	load := fmt.Sprintf("%g pods/s for %s (%d pods)", o.OpenRate, o.OpenDuration, n)
	names := map[Hook]string{
		NoHook:   "without webhook: p50 / p99, " + load,
		Noop:     "no-op webhook: p50 / p99",
		Annotate: "one-annotation webhook (the no-op's server adding one annotation): p50 / p99",
		Replay:   "replay webhook (the no-op's server answering with isamatch's recorded patch): p50 / p99",
		Isamatch: "isamatch, admission.resolve: sync (warm image cache): p50 / p99",
		GatePath: "isamatch, admission.resolve: gate (every pod gated at admission, released by the gate controller): p50 / p99",
	}
	for _, h := range openLoopHooks {
		f := figs[h]
		t.Add(Row{Section: sec, Name: names[h], Figure: fmt.Sprintf("%.1f / %.1f ms", Median(f.p50), Median(f.p99)),
			Verdict: Info, Runs: "p99 " + runsText("%.1f", f.p99)})
	}
	for i, sp := range openLoopSplits {
		t.Add(Row{Section: sec, Name: sp.name,
			Figure: fmt.Sprintf("%.1f / %.1f ms", Median(added[i].p50), Median(added[i].p99)), Verdict: Info,
			Runs: "p50 " + runsText("%.1f", added[i].p50) + "; p99 " + runsText("%.1f", added[i].p99)})
	}
	t.Add(Row{Section: sec, Name: "creates sent / failed; the generator's largest lag behind schedule (counted in the latencies)",
		Figure: fmt.Sprintf("%d / %d; %.1f ms", sent, failed, ms(lag)), Verdict: Info})
	t.Add(Row{Section: sec, Name: "index fetches of the warm image during the loads (its cache entry expired: admissions waited for the registry)",
		Figure: fmt.Sprintf("%d", fetches), Verdict: Info})
	return nil
}
