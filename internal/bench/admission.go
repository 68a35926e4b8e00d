package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// admissionPhase creates o.Pods unscheduled pods in ns and deletes them.
func admissionPhase(ctx context.Context, e *Env, o Options, ns string, withWebhook bool, tag string) (LoadResult, error) {
	if err := e.Namespace(ctx, ns, withWebhook); err != nil {
		return LoadResult{}, err
	}
	res, err := CreatePods(ctx, e.Clientset, loadPods(ns, tag, e.Ref(WarmImage, "v1"), Unscheduled, o.Pods), o.Clients)
	if err != nil {
		return res, err
	}
	return res, DeletePods(ctx, e.Clientset, ns)
}

// admissionRows measures admission with and without the webhook (and
// profiles the API server when asked).
func admissionRows(ctx context.Context, e *Env, o Options, t *Table) error {
	// Warm-up: the image cache, the API server's and the webhook's
	// connections, both namespaces.
	for _, with := range []bool{true, false} {
		ns := nsName("adm", with)
		if err := e.Namespace(ctx, ns, with); err != nil {
			return err
		}
		if _, err := CreatePods(ctx, e.Clientset, loadPods(ns, "warmup", e.Ref(WarmImage, "v1"), Unscheduled, 200), o.Clients); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := DeletePods(ctx, e.Clientset, ns); err != nil {
			return err
		}
	}
	// The pods as the webhook mutates them, one per request of the mix:
	// their size, and the template of the "pre-mutated" baseline.
	var sizes [2]int
	var mutated []*corev1.Pod
	for k, with := range []bool{false, true} {
		ns := nsName("adm", with)
		var bytes []int
		for i := range len(requestMix) {
			got, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, LoadPod(ns, fmt.Sprintf("size-%d", i), e.Ref(WarmImage, "v1"), Unscheduled, i),
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return fmt.Errorf("dry-run pod: %w", err)
			}
			raw, err := json.Marshal(got)
			if err != nil {
				return fmt.Errorf("marshal pod: %w", err)
			}
			bytes = append(bytes, len(raw))
			if with {
				if got.Annotations[isa.DecisionAnnotation] == "" {
					return fmt.Errorf("dry-run pod with request %q has no decision: the webhook did not mutate it", requestMix[i])
				}
				mutated = append(mutated, got)
			}
		}
		sizes[k] = int(Median(intsToFloats(bytes)))
	}
	premutated := func(ns, prefix string) []*corev1.Pod {
		pods := loadPods(ns, prefix, e.Ref(WarmImage, "v1"), Unscheduled, o.Pods)
		for i, p := range pods {
			m := mutated[i%len(mutated)]
			p.Annotations = maps.Clone(m.Annotations)
			p.Spec.Affinity = m.Spec.Affinity.DeepCopy()
		}
		return pods
	}
	var pre, preRatio []float64
	var p50w, p99w, rw, p50b, p99b, rb, added, ratio, callMean, handlerMean, cpuPer []float64
	pid, err := PidOf(e.WebhookBin)
	if err != nil {
		return err
	}
	for r := range o.Runs {
		// Alternate the order so drift favours neither side.
		order := []bool{true, false}
		if r%2 == 1 {
			order = []bool{false, true}
		}
		for _, with := range order {
			before, err := e.readAdmissionMetrics(ctx)
			if err != nil {
				return err
			}
			cpu0, err := CPUTime(pid)
			if err != nil {
				return err
			}
			res, err := admissionPhase(ctx, e, o, nsName("adm", with), with, fmt.Sprintf("r%d", r))
			if err != nil {
				return err
			}
			after, err := e.readAdmissionMetrics(ctx)
			if err != nil {
				return err
			}
			cpu1, err := CPUTime(pid)
			if err != nil {
				return err
			}
			if with {
				cpuPer = append(cpuPer, ms(cpu1-cpu0)/float64(o.Pods))
				callMean = append(callMean, 1e3*after.apiserver.Sub(before.apiserver).Mean())
				handlerMean = append(handlerMean, 1e3*after.handler.Sub(before.handler).Mean())
			}
			p50, p99, rate := ms(Percentile(res.Latencies, 0.5)), ms(Percentile(res.Latencies, 0.99)), res.PodsPerSecond()
			fmt.Fprintf(e.progress, "bench:   run %d webhook=%v: p50 %.1f ms p99 %.1f ms %.0f pods/s\n", r+1, with, p50, p99, rate)
			if with {
				p50w, p99w, rw = append(p50w, p50), append(p99w, p99), append(rw, rate)
			} else {
				p50b, p99b, rb = append(p50b, p50), append(p99b, p99), append(rb, rate)
			}
		}
		// The same API server work without the webhook hop: the mutated
		// pods created as they are into the excluded namespace.
		ns := nsName("adm", false)
		res, err := CreatePods(ctx, e.Clientset, premutated(ns, fmt.Sprintf("pre%d", r)), o.Clients)
		if err != nil {
			return err
		}
		if err := DeletePods(ctx, e.Clientset, ns); err != nil {
			return err
		}
		pre, preRatio = append(pre, res.PodsPerSecond()), append(preRatio, res.PodsPerSecond()/rb[r])
		fmt.Fprintf(e.progress, "bench:   run %d pre-mutated pods, no webhook: %.0f pods/s\n", r+1, res.PodsPerSecond())
		added = append(added, p99w[r]-p99b[r])
		ratio = append(ratio, rw[r]/rb[r])
	}
	const sec = "1 admission"
	who := fmt.Sprintf("%d pods, %d clients", o.Pods, o.Clients)
	t.Add(Row{Section: sec, Name: "without webhook (namespace excluded by namespaceSelector): p50 / p99, " + who,
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(p50b), Median(p99b)), Verdict: Info, Runs: "p99 " + runsText("%.1f", p99b)})
	t.Add(Row{Section: sec, Name: "with webhook (warm image cache): p50 / p99",
		Figure: fmt.Sprintf("%.1f / %.1f ms", Median(p50w), Median(p99w)), Verdict: Info, Runs: "p99 " + runsText("%.1f", p99w)})
	t.Add(Row{Section: sec, Name: "pods/s without / with webhook",
		Figure: fmt.Sprintf("%.0f / %.0f", Median(rb), Median(rw)), Verdict: Info, Runs: "with " + runsText("%.0f", rw)})
	t.Add(Row{Section: sec, Name: "webhook call, mean: as the API server times it / the webhook's handler (own metrics)",
		Figure: fmt.Sprintf("%.2f / %.2f ms", Median(callMean), Median(handlerMean)), Verdict: Info,
		Runs: "call " + runsText("%.2f", callMean) + "; handler " + runsText("%.2f", handlerMean)})
	t.Add(Row{Section: sec, Name: "webhook process CPU time per admission (utime+stime, deletes included)",
		Figure: fmt.Sprintf("%.2f ms", Median(cpuPer)), Verdict: Info, Runs: runsText("%.2f", cpuPer)})
	t.Add(Row{Section: sec, Name: "stored pod size without / with isamatch (JSON, median over the request mix)",
		Figure: fmt.Sprintf("%d / %d bytes", sizes[0], sizes[1]), Verdict: Info})
	t.Add(Row{Section: sec, Name: "no webhook, pods created already carrying isamatch's affinity + decision: pods/s, ratio to plain pods",
		Figure: fmt.Sprintf("%.0f; %.2f", Median(pre), Median(preRatio)), Verdict: Info, Runs: runsText("%.2f", preRatio)})
	m := Median(added)
	t.Add(Row{Section: sec, Name: "added p99 latency (with - without, same run)",
		Figure: fmt.Sprintf("%.1f ms", m), Goal: "< 5 ms", Verdict: verdict(m < 5), Runs: runsText("%.1f", added)})
	m = Median(ratio)
	t.Add(Row{Section: sec, Name: "throughput ratio with / without",
		Figure: fmt.Sprintf("%.2f", m), Goal: ">= 0.90", Verdict: verdict(m >= 0.9), Runs: runsText("%.2f", ratio)})

	if o.ProfileDir != "" {
		if err := profileWebhook(ctx, e, o); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	return nil
}

func nsName(what string, with bool) string {
	if with {
		return "bench-" + what + "-with"
	}
	return "bench-" + what + "-without"
}

// profileWebhook takes CPU profiles while admission batches run: of the
// API server without the webhook (apiserver-cpu-without.pprof), then of the
// webhook and the API server with it (webhook-cpu.pprof,
// apiserver-cpu-with.pprof), and an allocation profile of the webhook
// after, into o.ProfileDir.
func profileWebhook(ctx context.Context, e *Env, o Options) error {
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.ProfileDir, err)
	}
	const seconds = 10
	for _, with := range []bool{false, true} {
		var profiles []func() error
		if with {
			profiles = append(profiles, func() error {
				return fetch(ctx, e, fmt.Sprintf("profile?seconds=%d", seconds), filepath.Join(o.ProfileDir, "webhook-cpu.pprof"))
			})
		}
		name := "apiserver-cpu-without.pprof"
		if with {
			name = "apiserver-cpu-with.pprof"
		}
		profiles = append(profiles, func() error {
			return fetchAPIServer(ctx, e, seconds, filepath.Join(o.ProfileDir, name))
		})
		done := make(chan error, len(profiles))
		for _, p := range profiles {
			go func() { done <- p() }()
		}
		ns := nsName("adm", with)
		deadline := time.Now().Add(seconds * time.Second)
		for b := 0; time.Now().Before(deadline); b++ {
			if _, err := admissionPhase(ctx, e, o, ns, with, fmt.Sprintf("prof%d", b)); err != nil {
				return err
			}
		}
		for range profiles {
			if err := <-done; err != nil {
				return err
			}
		}
	}
	return fetch(ctx, e, "allocs", filepath.Join(o.ProfileDir, "webhook-allocs.pprof"))
}

// fetchAPIServer writes a CPU profile of the API server (its
// /debug/pprof, on by default) to path.
func fetchAPIServer(ctx context.Context, e *Env, seconds int, path string) error {
	raw, err := e.Clientset.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("fetch the API server's CPU profile: %w", err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fetch(ctx context.Context, e *Env, what, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.PprofAddr+"/debug/pprof/"+what, nil)
	if err != nil {
		return fmt.Errorf("build pprof request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: status %s", what, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
