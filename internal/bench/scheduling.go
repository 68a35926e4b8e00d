package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// defaultMaxSkew is the scheduler's default maxSkew over hostnames, which
// isamatch's spreading over a best-fit group keeps.
const defaultMaxSkew = 3

// schedulingRows measures scheduling with and without isamatch's affinity:
// admission included, then the scheduler alone.
func schedulingRows(ctx context.Context, e *Env, o Options, t *Table) error {
	var rw, rb, ratio []float64
	groups := mustGroups(o.NodeGroups)
	nodes := NodeSet(benchNodes, o.Nodes, groups)
	judge, err := newFitJudge(NodeISAs(benchNodes, o.Nodes, groups))
	if err != nil {
		return err
	}
	fit := map[bool]*fitCount{true: {}, false: {}}
	var bestRuns, skewRuns []float64
	sets := 0
	for r := range o.Runs {
		order := []bool{true, false}
		if r%2 == 1 {
			order = []bool{false, true}
		}
		for _, with := range order {
			// A namespace per run: the scheduler may still count the pods
			// of the last run, deleted, as siblings of these.
			ns := fmt.Sprintf("%s-r%d", nsName("sched", hookOf(with)), r)
			if err := e.Namespace(ctx, ns, hookOf(with)); err != nil {
				return err
			}
			w, err := WatchBinds(ctx, e.Clientset, ns)
			if err != nil {
				return err
			}
			load := loadPods(ns, fmt.Sprintf("r%d", r), e.Ref(WarmImage, "v1"), "", o.Pods)
			if err := OwnByReplicaSets(ctx, e.Clientset, ns, load); err != nil {
				w.Stop()
				return err
			}
			res, err := CreatePods(ctx, e.Clientset, load, o.Clients)
			if err != nil {
				w.Stop()
				return err
			}
			last, err := w.Wait(ctx, o.Pods, 5*time.Minute)
			w.Stop()
			if err != nil {
				return fmt.Errorf("webhook=%v: %w\n%s", with, err, e.CP.SchedulerLogTail(10))
			}
			rate := float64(o.Pods) / last.Sub(res.Start).Seconds()
			var run fitCount
			var bound []*corev1.Pod
			spread := ""
			if err := eachPod(ctx, e.Clientset, ns, func(p *corev1.Pod) error {
				bound = append(bound, p)
				return judge.add(p, &run)
			}); err != nil {
				return err
			}
			fit[with].add(run)
			if with {
				bestRuns = append(bestRuns, pct(run.bestFit, run.eligible))
				k, spreads := spreadSkew(bound, nodes)
				skewRuns, sets = append(skewRuns, float64(k)), max(sets, len(spreads))
				spread = fmt.Sprintf("; siblings per best-fit node: %v", spreads)
			}
			fmt.Fprintf(e.progress, "bench:   run %d affinity=%v: %.0f pods/s (created in %.1fs, last bound at %.1fs)%s\n",
				r+1, with, rate, res.Elapsed.Seconds(), last.Sub(res.Start).Seconds(), spread)
			if with {
				rw = append(rw, rate)
			} else {
				rb = append(rb, rate)
			}
			if err := DeletePods(ctx, e.Clientset, ns); err != nil {
				return err
			}
		}
		ratio = append(ratio, rw[r]/rb[r])
	}
	const sec = "2 scheduling"
	t.Add(Row{Section: sec, Name: fmt.Sprintf("%d pods on %d nodes, first create to last bind: pods/s without / with isamatch", o.Pods, o.Nodes),
		Figure: fmt.Sprintf("%.0f / %.0f", Median(rb), Median(rw)), Verdict: Info, Runs: "with " + runsText("%.0f", rw)})
	m := Median(ratio)
	t.Add(Row{Section: sec, Name: "throughput ratio with / without (admission included)",
		Figure: fmt.Sprintf("%.2f", m), Goal: ">= 0.90", Verdict: verdict(m >= 0.9), Runs: runsText("%.2f", ratio)})
	w, n := fit[true], fit[false]
	t.Add(Row{Section: sec, Name: fmt.Sprintf("pods of ReplicaSets on a node that can run them (oracle), the scheduler's defaults, every run: isamatch (%d pods) / without", w.pods),
		Figure: fmt.Sprintf("%.2f%% / %.1f%%", pct(w.correct, w.pods), pct(n.correct, n.pods)), Goal: "100%", Verdict: verdict(w.pods > 0 && w.correct == w.pods)})
	best := pct(w.bestFit, w.eligible)
	t.Add(Row{Section: sec, Name: "those pods on a best-fit node (oracle): isamatch / without",
		Figure: fmt.Sprintf("%.2f%% / %.1f%%", best, pct(n.bestFit, n.eligible)), Goal: ">= 99%", Verdict: verdict(best >= 99), Runs: runsText("%.1f", bestRuns)})
	t.Add(Row{Section: sec, Name: fmt.Sprintf("isamatch's spreading: most siblings on one best-fit node less the fewest on another, largest over %d ReplicaSets and every run", sets),
		Figure: fmt.Sprintf("%.0f", slices.Max(skewRuns)), Goal: fmt.Sprintf("<= %d", defaultMaxSkew),
		Verdict: verdict(sets > 0 && slices.Max(skewRuns) <= defaultMaxSkew), Runs: runsText("%.0f", skewRuns)})
	return schedAloneRows(ctx, e, o, t)
}
