package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// schedKind is what the scheduler-alone measurement releases.
type schedKind string

const (
	// schedPlain: the load pods without a webhook; the scheduler's
	// default topology spreading applies to them.
	schedPlain schedKind = "plain"
	// schedConfined: the same pods without a webhook, each carrying the
	// required node affinity isamatch gives it and nothing else, as a
	// user would confine them by hand to the nodes that can run them.
	schedConfined schedKind = "confined"
	// schedIsamatch: the pods as isamatch's webhook admits them (required
	// and preferred affinity, their own spread constraints).
	schedIsamatch schedKind = "isamatch"
)

// schedOrder is the order of the kinds in run r: each kind comes first,
// second and third in turn, so no kind always meets the cluster the
// previous one left behind.
func schedOrder(r int) []schedKind {
	kinds := []schedKind{schedPlain, schedConfined, schedIsamatch}
	s := r % len(kinds)
	return append(kinds[s:], kinds[:s]...)
}

// hookOfKind is the webhook a kind's pods go through.
func hookOfKind(k schedKind) Hook {
	if k == schedIsamatch {
		return Isamatch
	}
	return NoHook
}

// requiredTerms creates the load pods gated through isamatch's webhook,
// reads the required node affinity it gave each (by index, nil where it
// gave none) and deletes them again.
func requiredTerms(ctx context.Context, e *Env, o Options) ([]*corev1.NodeSelector, error) {
	ns := nsName("alone-terms", Isamatch)
	if err := e.Namespace(ctx, ns, Isamatch); err != nil {
		return nil, err
	}
	pods := Gate(loadPods(ns, "t", e.Ref(WarmImage, "v1"), "", o.Pods))
	if _, err := CreatePods(ctx, e.Clientset, pods, o.Clients); err != nil {
		return nil, err
	}
	terms := make([]*corev1.NodeSelector, len(pods))
	for i, p := range pods {
		got, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read the affinity isamatch gave %s/%s: %w", ns, p.Name, err)
		}
		if a := got.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			terms[i] = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
	}
	return terms, DeletePods(ctx, e.Clientset, ns)
}

// confine gives each pod the required node affinity of terms (by index)
// and no other affinity.
func confine(pods []*corev1.Pod, terms []*corev1.NodeSelector) []*corev1.Pod {
	for i, p := range pods {
		if terms[i] == nil {
			continue
		}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: terms[i].DeepCopy(),
		}}
	}
	return pods
}

// gatedRate creates the pods of kind k with a scheduling gate, releases
// them and returns pods/s from the first release to the last bind, then
// deletes them.
func gatedRate(ctx context.Context, e *Env, o Options, r int, k schedKind, terms []*corev1.NodeSelector) (float64, error) {
	h := hookOfKind(k)
	ns := nsName("alone", h)
	if k == schedConfined {
		ns = nsName("alone-confined", h)
	}
	if err := e.Namespace(ctx, ns, h); err != nil {
		return 0, err
	}
	pods := Gate(loadPods(ns, fmt.Sprintf("g%d", r), e.Ref(WarmImage, "v1"), "", o.Pods))
	if k == schedConfined {
		pods = confine(pods, terms)
	}
	if err := OwnByReplicaSets(ctx, e.Clientset, ns, pods); err != nil {
		return 0, err
	}
	if _, err := CreatePods(ctx, e.Clientset, pods, o.Clients); err != nil {
		return 0, err
	}
	w, err := WatchBinds(ctx, e.Clientset, ns)
	if err != nil {
		return 0, err
	}
	var profiled chan error
	if o.ProfileDir != "" && r == 0 {
		profiled = make(chan error, 1)
		go func() { profiled <- profileScheduler(ctx, e, o, k) }()
	}
	first, err := Ungate(ctx, e.Clientset, pods, o.Clients)
	if err != nil {
		w.Stop()
		return 0, err
	}
	last, err := w.Wait(ctx, o.Pods, 5*time.Minute)
	if err != nil {
		return 0, fmt.Errorf("gated, %s: %w\n%s", k, err, e.CP.SchedulerLogTail(10))
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return 0, err
		}
	}
	rate := float64(o.Pods) / last.Sub(first).Seconds()
	fmt.Fprintf(e.progress, "bench:   run %d %s, gated: %.0f pods/s from first ungate to last bind\n", r+1, k, rate)
	return rate, DeletePods(ctx, e.Clientset, ns)
}

// schedAloneRows measures the scheduler alone on plain, confined and
// isamatch's pods, in rotating order.
func schedAloneRows(ctx context.Context, e *Env, o Options, t *Table) error {
	terms, err := requiredTerms(ctx, e, o)
	if err != nil {
		return err
	}
	rates := map[schedKind][]float64{}
	times := map[schedKind]schedTime{}
	var ratio, cost, confinement []float64
	for r := range o.Runs {
		for _, k := range schedOrder(r) {
			before, err := readSchedTime(ctx, e)
			if err != nil {
				return err
			}
			rate, err := gatedRate(ctx, e, o, r, k, terms)
			if err != nil {
				return err
			}
			after, err := readSchedTime(ctx, e)
			if err != nil {
				return err
			}
			rates[k] = append(rates[k], rate)
			times[k] = times[k].plus(after.since(before))
		}
		p, c, i := rates[schedPlain][r], rates[schedConfined][r], rates[schedIsamatch][r]
		ratio = append(ratio, i/p)
		cost = append(cost, i/c)
		confinement = append(confinement, c/p)
	}
	const sec = "2 scheduling"
	t.Add(Row{Section: sec, Name: "scheduler alone (pods created with a scheduling gate, then released): pods/s without / with",
		Figure: fmt.Sprintf("%.0f / %.0f", Median(rates[schedPlain]), Median(rates[schedIsamatch])), Verdict: Info,
		Runs: "with " + runsText("%.0f", rates[schedIsamatch])})
	m := Median(ratio)
	t.Add(Row{Section: sec, Name: "scheduler-alone throughput ratio with / without (first release to last bind)",
		Figure: fmt.Sprintf("%.2f", m), Goal: ">= 0.95", Verdict: verdict(m >= 0.95), Runs: runsText("%.2f", ratio)})
	t.Add(Row{Section: sec, Name: "the same pods confined by hand (isamatch's required affinity only, no webhook): pods/s",
		Figure: fmt.Sprintf("%.0f", Median(rates[schedConfined])), Verdict: Info, Runs: runsText("%.0f", rates[schedConfined])})
	t.Add(Row{Section: sec, Name: "scheduler-alone ratio confined by hand / without (what confining to the nodes that can run a pod costs)",
		Figure: fmt.Sprintf("%.2f", Median(confinement)), Verdict: Info, Runs: runsText("%.2f", confinement)})
	t.Add(Row{Section: sec, Name: "scheduler-alone ratio with / confined by hand (what isamatch's ranking and spreading add)",
		Figure: fmt.Sprintf("%.2f", Median(cost)), Verdict: Info, Runs: runsText("%.2f", cost)})
	for _, row := range schedTimeRows(sec, []schedKind{schedPlain, schedConfined, schedIsamatch}, times) {
		t.Add(row)
	}
	return nil
}
