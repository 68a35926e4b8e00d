package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// admissionPhase creates o.Pods unscheduled pods in ns and deletes them.
func admissionPhase(ctx context.Context, e *Env, o Options, ns string, h Hook, tag string) (LoadResult, error) {
	if err := e.Namespace(ctx, ns, h); err != nil {
		return LoadResult{}, err
	}
	res, err := CreatePods(ctx, e.Clientset, loadPods(ns, tag, e.Ref(WarmImage, "v1"), Unscheduled, o.Pods), o.Clients)
	if err != nil {
		return res, err
	}
	return res, DeletePods(ctx, e.Clientset, ns)
}

// admissionHooks are the closed-loop admission variants, in the order of
// the first run; later runs rotate it so drift favours none.
var admissionHooks = []Hook{Isamatch, NoHook, Noop}

// rotated is hs rotated left by r.
func rotated(hs []Hook, r int) []Hook {
	k := r % len(hs)
	return append(append([]Hook(nil), hs[k:]...), hs[:k]...)
}

// hookFigures are one variant's figures, one entry per run.
type hookFigures struct{ p50, p99, rate []float64 }

func (f *hookFigures) add(res LoadResult) (p50, p99, rate float64) {
	p50, p99, rate = ms(Percentile(res.Latencies, 0.5)), ms(Percentile(res.Latencies, 0.99)), res.PodsPerSecond()
	f.p50, f.p99, f.rate = append(f.p50, p50), append(f.p99, p99), append(f.rate, rate)
	return p50, p99, rate
}

// warmUp creates and deletes n pods in the namespace of each hook: the
// image cache, the API server's and the webhooks' connections.
func warmUp(ctx context.Context, e *Env, o Options, what string, hooks []Hook, n int) error {
	for _, h := range hooks {
		ns := nsName(what, h)
		if err := e.Namespace(ctx, ns, h); err != nil {
			return err
		}
		if _, err := CreatePods(ctx, e.Clientset, loadPods(ns, "warmup", e.Ref(WarmImage, "v1"), Unscheduled, n), o.Clients); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := DeletePods(ctx, e.Clientset, ns); err != nil {
			return err
		}
	}
	return nil
}

// admissionRows measures admission without a webhook, with the no-op
// webhook and with isamatch's (and profiles the API server when asked).
func admissionRows(ctx context.Context, e *Env, o Options, t *Table) error {
	if err := warmUp(ctx, e, o, "adm", slices.Concat(admissionHooks, []Hook{Replay, Annotate}), 200); err != nil {
		return err
	}
	// The pods as the webhook mutates them, one per request of the mix
	// (StartEnv's dry runs): their size, and the template of the
	// "pre-mutated" loads.
	mutated := e.Mutated
	plainPods, err := dryRunMix(ctx, e, NoHook)
	if err != nil {
		return err
	}
	var sizes [2]int
	for k, pods := range [][]*corev1.Pod{plainPods, mutated} {
		var bytes []int
		for _, p := range pods {
			raw, err := json.Marshal(p)
			if err != nil {
				return fmt.Errorf("marshal pod: %w", err)
			}
			bytes = append(bytes, len(raw))
		}
		sizes[k] = int(Median(intsToFloats(bytes)))
	}
	plain := func(ns, prefix string, n int) []*corev1.Pod {
		return loadPods(ns, prefix, e.Ref(WarmImage, "v1"), Unscheduled, n)
	}
	// premutated pods carry what isamatch writes; withDecision false
	// leaves out its decision annotations (the affinity stays).
	premutated := func(withDecision bool) func(ns, prefix string, n int) []*corev1.Pod {
		return func(ns, prefix string, n int) []*corev1.Pod {
			pods := plain(ns, prefix, n)
			for i, p := range pods {
				m := mutated[i%len(mutated)]
				p.Annotations = maps.Clone(m.Annotations)
				if !withDecision {
					delete(p.Annotations, isa.DecisionAnnotation)
					delete(p.Annotations, isa.DecisionCountsAnnotation)
				}
				p.Spec.Affinity = m.Spec.Affinity.DeepCopy()
			}
			return pods
		}
	}
	// The variants, interleaved batch by batch in every run.
	const (
		vIsamatch = iota
		vNone
		vNoop
		vPreNone
		vPreNoop
		vPreNoopAffinity
		vReplay
		vAnnotate
	)
	variants := []variant{
		vIsamatch:        {name: "isamatch", hook: Isamatch, pods: plain},
		vNone:            {name: "no webhook", hook: NoHook, pods: plain},
		vNoop:            {name: "no-op webhook", hook: Noop, pods: plain},
		vPreNone:         {name: "pre-mutated, no webhook", hook: NoHook, pods: premutated(true)},
		vPreNoop:         {name: "pre-mutated, no-op webhook", hook: Noop, pods: premutated(true)},
		vPreNoopAffinity: {name: "affinity only, no-op webhook", hook: Noop, pods: premutated(false)},
		vReplay:          {name: "replay webhook", hook: Replay, pods: plain},
		vAnnotate:        {name: "one-annotation webhook", hook: Annotate, pods: plain},
	}
	figs := make([]hookFigures, len(variants))
	var callMean, handlerMean, noopCallMean, cpuPer, noopCPUPer []float64
	// Two processes run the webhook binary (the second with admission.resolve: gate):
	// the one measured is the one started first.
	pid := e.Webhook.Pid()
	noopPid := e.Noop.Process.Pid()
	for r := range o.Runs {
		// What the webhooks' own figures sum to over the run's batches of
		// plain pods through each.
		var call, handler, noopCall HistSums
		var cpu, noopCPU time.Duration
		var before admissionMetrics
		var cpu0, noopCPU0 time.Duration
		measure := func(v variant, start bool) error {
			if v.name != variants[vIsamatch].name && v.name != variants[vNoop].name {
				return nil
			}
			m, err := e.readAdmissionMetrics(ctx)
			if err != nil {
				return err
			}
			c, err := CPUTime(pid)
			if err != nil {
				return err
			}
			nc, err := CPUTime(noopPid)
			if err != nil {
				return err
			}
			if start {
				before, cpu0, noopCPU0 = m, c, nc
				return nil
			}
			switch v.hook {
			case Isamatch:
				cpu += c - cpu0
				call = call.Add(m.apiserver.Sub(before.apiserver))
				handler = handler.Add(m.handler.Sub(before.handler))
			case Noop:
				noopCPU += nc - noopCPU0
				noopCall = noopCall.Add(m.noop.Sub(before.noop))
			}
			return nil
		}
		res, err := runInterleaved(ctx, e, o.Pods, o.Clients, variants, r, measure)
		if err != nil {
			return err
		}
		for i, v := range variants {
			p50, p99, rate := figs[i].add(res[i])
			fmt.Fprintf(e.progress, "bench:   run %d %s: p50 %.1f ms p99 %.1f ms %.0f pods/s\n", r+1, v.name, p50, p99, rate)
		}
		cpuPer = append(cpuPer, ms(cpu)/float64(o.Pods))
		noopCPUPer = append(noopCPUPer, ms(noopCPU)/float64(o.Pods))
		callMean, handlerMean = append(callMean, 1e3*call.Mean()), append(handlerMean, 1e3*handler.Mean())
		noopCallMean = append(noopCallMean, 1e3*noopCall.Mean())
	}
	w, b, n := figs[vIsamatch], figs[vNone], figs[vNoop]
	pre, preNoop, preAff := figs[vPreNone], figs[vPreNoop], figs[vPreNoopAffinity]
	rp, an := figs[vReplay], figs[vAnnotate]
	var preRatio, sameBytesRatio, sameBytesAdded, added, ratio, floorAdded, floorRatio, noopAdded, noopRatio, decisionRatio []float64
	var replayRatio, replayAdded, ownRatio, ownAdded, annRatio, annAdded, beyondRatio, beyondAdded []float64
	for r := range o.Runs {
		annRatio, annAdded = append(annRatio, an.rate[r]/n.rate[r]), append(annAdded, an.p99[r]-n.p99[r])
		beyondRatio, beyondAdded = append(beyondRatio, rp.rate[r]/an.rate[r]), append(beyondAdded, rp.p99[r]-an.p99[r])
		replayRatio, replayAdded = append(replayRatio, rp.rate[r]/n.rate[r]), append(replayAdded, rp.p99[r]-n.p99[r])
		ownRatio, ownAdded = append(ownRatio, w.rate[r]/rp.rate[r]), append(ownAdded, w.p99[r]-rp.p99[r])
		preRatio = append(preRatio, pre.rate[r]/b.rate[r])
		sameBytesRatio = append(sameBytesRatio, w.rate[r]/preNoop.rate[r])
		sameBytesAdded = append(sameBytesAdded, w.p99[r]-preNoop.p99[r])
		decisionRatio = append(decisionRatio, preNoop.rate[r]/preAff.rate[r])
		added, ratio = append(added, w.p99[r]-b.p99[r]), append(ratio, w.rate[r]/b.rate[r])
		floorAdded, floorRatio = append(floorAdded, w.p99[r]-n.p99[r]), append(floorRatio, w.rate[r]/n.rate[r])
		noopAdded, noopRatio = append(noopAdded, n.p99[r]-b.p99[r]), append(noopRatio, n.rate[r]/b.rate[r])
	}
	const sec = "1 admission"
	who := fmt.Sprintf("%d pods, %d clients", o.Pods, o.Clients)
	t.Add(Row{Section: sec, Name: "without webhook (namespace excluded by namespaceSelector): p50 / p99, " + who,
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(b.p50), Median(b.p99)), Verdict: Info, Runs: "p99 " + runsText("%.1f", b.p99)})
	t.Add(Row{Section: sec, Name: "with webhook (warm image cache): p50 / p99",
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(w.p50), Median(w.p99)), Verdict: Info, Runs: "p99 " + runsText("%.1f", w.p99)})
	t.Add(Row{Section: sec, Name: "pods/s without / with webhook",
		Figure: fmt.Sprintf("%.0f / %.0f", Median(b.rate), Median(w.rate)), Verdict: Info, Runs: "with " + runsText("%.0f", w.rate)})
	t.Add(Row{Section: sec, Name: "webhook call, mean: as the API server times it / the webhook's handler (own metrics)",
		Figure: fmt.Sprintf("%.2f / %.2f ms", Median(callMean), Median(handlerMean)), Verdict: Info,
		Runs: "call " + runsText("%.2f", callMean) + "; handler " + runsText("%.2f", handlerMean)})
	t.Add(Row{Section: sec, Name: "webhook process CPU time per admission (utime+stime, deletes included)",
		Figure: fmt.Sprintf("%.2f ms", Median(cpuPer)), Verdict: Info, Runs: runsText("%.2f", cpuPer)})
	t.Add(Row{Section: sec, Name: "stored pod size without / with isamatch (JSON, median over the request mix)",
		Figure: fmt.Sprintf("%d / %d bytes", sizes[0], sizes[1]), Verdict: Info})
	t.Add(Row{Section: sec, Name: "no webhook, pods created already carrying isamatch's affinity + decision: pods/s, ratio to plain pods",
		Figure: fmt.Sprintf("%.0f; %.2f", Median(pre.rate), Median(preRatio)), Verdict: Info, Runs: runsText("%.2f", preRatio)})
	m := Median(added)
	t.Add(Row{Section: sec, Name: "added p99 latency (with - without, same run)",
		Figure: fmt.Sprintf("%.1f ms", m), Goal: "< 5 ms", Verdict: verdict(m < 5), Runs: runsText("%.1f", added)})
	m = Median(ratio)
	t.Add(Row{Section: sec, Name: "throughput ratio with / without",
		Figure: fmt.Sprintf("%.2f", m), Goal: ">= 0.90", Verdict: verdict(m >= 0.9), Runs: runsText("%.2f", ratio)})

	// The floor: what any webhook built this way costs, and isamatch
	// against it.
	t.Add(Row{Section: sec, Name: "no-op webhook (same framework, TLS and configuration; allows every pod, no patch): p50 / p99",
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(n.p50), Median(n.p99)), Verdict: Info, Runs: "p99 " + runsText("%.1f", n.p99)})
	t.Add(Row{Section: sec, Name: "no-op webhook: pods/s; call mean as the API server times it; process CPU per admission",
		Figure: fmt.Sprintf("%.0f; %.2f ms; %.2f ms", Median(n.rate), Median(noopCallMean), Median(noopCPUPer)), Verdict: Info,
		Runs: "pods/s " + runsText("%.0f", n.rate) + "; call " + runsText("%.2f", noopCallMean) + "; CPU " + runsText("%.2f", noopCPUPer)})
	t.Add(ratioRow(sec, "no-op webhook against none: throughput ratio; added p99 (the cost of any webhook here)", noopRatio, noopAdded))
	m = Median(floorAdded)
	t.Add(Row{Section: sec, Name: "added p99 over the no-op webhook (isamatch - no-op, same run)",
		Figure: fmt.Sprintf("%.1f ms", m), Goal: "< 2 ms", Verdict: verdict(m < 2), Runs: runsText("%.1f", floorAdded)})
	m = Median(floorRatio)
	t.Add(Row{Section: sec, Name: "throughput ratio isamatch / no-op webhook",
		Figure: fmt.Sprintf("%.2f", m), Goal: ">= 0.90", Verdict: verdict(m >= 0.9), Runs: runsText("%.2f", floorRatio)})

	// isamatch's bytes in the stored pod cost the API server what they cost
	// without any webhook (the pre-mutated row); against the no-op webhook
	// creating pods that already carry them, what is left is the cost of
	// isamatch's own work: its decision, the patch and its application.
	t.Add(Row{Section: sec, Name: "no-op webhook, pods created already carrying isamatch's affinity + decision: p50 / p99; pods/s",
		Figure: fmt.Sprintf("%.1f / %.1f ms; %.0f", Median(preNoop.p50), Median(preNoop.p99), Median(preNoop.rate)), Verdict: Info,
		Runs: "pods/s " + runsText("%.0f", preNoop.rate)})
	t.Add(ratioRow(sec, "isamatch against that no-op load (same stored pods): throughput ratio; added p99", sameBytesRatio, sameBytesAdded))
	t.Add(Row{Section: sec, Name: "no-op webhook, pre-mutated pods with / without the decision annotations: throughput ratio (what the decision costs)",
		Figure: fmt.Sprintf("%.2f", Median(decisionRatio)), Verdict: Info, Runs: runsText("%.2f", decisionRatio)})

	// The replay path writes isamatch's very patch without deciding
	// anything: against the no-op, what writing it through any webhook
	// costs; isamatch against it, what deciding costs.
	t.Add(Row{Section: sec, Name: "replay webhook (the no-op's server answering each pod with isamatch's recorded patch): p50 / p99; pods/s",
		Figure: fmt.Sprintf("%.1f / %.1f ms; %.0f", Median(rp.p50), Median(rp.p99), Median(rp.rate)), Verdict: Info,
		Runs: "pods/s " + runsText("%.0f", rp.rate)})
	t.Add(ratioRow(sec, "replay against the no-op (writing isamatch's patch, deciding nothing): throughput ratio; added p99", replayRatio, replayAdded))
	t.Add(ratioRow(sec, "isamatch against the replay (its decision alone): throughput ratio; added p99", ownRatio, ownAdded))

	// The one-annotation path writes the least any mutation writes:
	// against the no-op, what a patch at all costs, whatever its size;
	// the replay against it, what isamatch's patch costs beyond that.
	t.Add(Row{Section: sec, Name: "one-annotation webhook (the no-op's server adding one annotation: the least any mutation writes): p50 / p99; pods/s",
		Figure: fmt.Sprintf("%.1f / %.1f ms; %.0f", Median(an.p50), Median(an.p99), Median(an.rate)), Verdict: Info,
		Runs: "pods/s " + runsText("%.0f", an.rate)})
	t.Add(ratioRow(sec, "one annotation against the no-op (the cost of any patch at all): throughput ratio; added p99", annRatio, annAdded))
	t.Add(ratioRow(sec, "replay against one annotation (what isamatch's patch costs beyond any patch): throughput ratio; added p99", beyondRatio, beyondAdded))

	if o.ProfileDir != "" {
		if err := profileWebhook(ctx, e, o); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	return nil
}

// nsName is the namespace of a section's pods that go through h.
func nsName(what string, h Hook) string {
	return "bench-" + what + "-" + string(h)
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// ratioRow is an informational row of a throughput ratio and an added p99,
// one of each per run.
func ratioRow(sec, name string, ratio, added []float64) Row {
	return Row{Section: sec, Name: name, Figure: fmt.Sprintf("%.2f; %.1f ms", Median(ratio), Median(added)), Verdict: Info,
		Runs: runsText("%.2f", ratio) + "; " + runsText("%.1f", added)}
}
