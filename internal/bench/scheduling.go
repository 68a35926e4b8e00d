package bench

import (
	"context"
	"fmt"
	"time"
)

// schedulingRows measures scheduling with and without isamatch's affinity:
// admission included, then the scheduler alone.
func schedulingRows(ctx context.Context, e *Env, o Options, t *Table) error {
	var rw, rb, ratio []float64
	for r := range o.Runs {
		order := []bool{true, false}
		if r%2 == 1 {
			order = []bool{false, true}
		}
		for _, with := range order {
			ns := nsName("sched", hookOf(with))
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
			if err != nil {
				return fmt.Errorf("webhook=%v: %w\n%s", with, err, e.CP.SchedulerLogTail(10))
			}
			rate := float64(o.Pods) / last.Sub(res.Start).Seconds()
			fmt.Fprintf(e.progress, "bench:   run %d affinity=%v: %.0f pods/s (created in %.1fs, last bound at %.1fs)\n",
				r+1, with, rate, res.Elapsed.Seconds(), last.Sub(res.Start).Seconds())
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
	return schedAloneRows(ctx, e, o, t)
}
