package bench

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/test/framework"
)

// coldPlatforms are the platforms of every cold image: those of the warm
// image, so every request of the mix is served.
var coldPlatforms = warmPlatforms

// coldPhase pushes images (each imagePods pods), creates the pods through
// the webhook and returns the load, the proxy's request counts for it and
// how many pods' decisions recorded an image error.
func coldPhase(ctx context.Context, e *Env, o Options, ns, prefix string, images, imagePods int) (LoadResult, map[RequestKey]int, int, error) {
	repos := make([]string, images)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for k := range images {
		repos[k] = fmt.Sprintf("bench/%s-%03d", prefix, k)
		g.Go(func() error {
			_, err := framework.PushIndex(gctx, e.Registry, repos[k], "v1", coldPlatforms)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return LoadResult{}, nil, 0, err
	}
	var pods []*corev1.Pod
	for k, repo := range repos {
		for j := range imagePods {
			pods = append(pods, LoadPod(ns, fmt.Sprintf("%s-%03d-%d", prefix, k, j), e.Ref(repo, "v1"), Unscheduled, k+j))
		}
	}
	before := e.Proxy.Snapshot()
	res, err := CreatePods(ctx, e.Clientset, pods, o.Clients)
	if err != nil {
		return res, nil, 0, err
	}
	delta := Delta(before, e.Proxy.Snapshot())
	list, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return res, nil, 0, fmt.Errorf("list pods of %s: %w", ns, err)
	}
	bad := 0
	for _, p := range list.Items {
		if d := p.Annotations[DecisionAnnotation]; d == "" || strings.Contains(d, "[error") {
			bad++
		}
	}
	return res, delta, bad, DeletePods(ctx, e.Clientset, ns)
}

// perImage summarises request counts over the repositories of one phase:
// the smallest and largest number of index (tag manifest) fetches per
// image, and all requests per image.
func perImage(delta map[RequestKey]int, prefix string, images int) (minIdx, maxIdx int, total float64, others int) {
	minIdx = -1
	tags := map[string]int{}
	for k, v := range delta {
		if !strings.HasPrefix(k.Repo, "bench/"+prefix+"-") {
			others += v
			continue
		}
		total += float64(v)
		if k.Kind == KindTagManifest {
			tags[k.Repo] += v
		}
	}
	for k := range images {
		n := tags[fmt.Sprintf("bench/%s-%03d", prefix, k)]
		if minIdx < 0 || n < minIdx {
			minIdx = n
		}
		maxIdx = max(maxIdx, n)
	}
	return minIdx, maxIdx, total / float64(images), others
}

// coldRows is item 4.
func coldRows(ctx context.Context, e *Env, o Options, t *Table) error {
	ns := nsName("cold", true)
	if err := e.Namespace(ctx, ns, true); err != nil {
		return err
	}
	var rateA, p99A, totA, totB []float64
	minA, maxA, minB, maxB, bad, others := 1<<30, 0, 1<<30, 0, 0, 0
	for r := range o.Runs {
		pa := fmt.Sprintf("cold-r%d-a", r)
		res, delta, b, err := coldPhase(ctx, e, o, ns, pa, o.ColdImages, 1)
		if err != nil {
			return err
		}
		lo, hi, tot, oth := perImage(delta, pa, o.ColdImages)
		minA, maxA, bad, others = min(minA, lo), max(maxA, hi), bad+b, others+oth
		rateA, p99A, totA = append(rateA, res.PodsPerSecond()), append(p99A, ms(Percentile(res.Latencies, 0.99))), append(totA, tot)
		fmt.Fprintf(e.progress, "bench:   run %d: %d new images, one pod each: %.0f pods/s, p99 %.1f ms, index fetches per image %d..%d, %.1f requests per image\n",
			r+1, o.ColdImages, res.PodsPerSecond(), p99A[r], lo, hi, tot)

		pb := fmt.Sprintf("cold-r%d-b", r)
		res, delta, b, err = coldPhase(ctx, e, o, ns, pb, o.ColdShared, o.ColdPodsPerImage)
		if err != nil {
			return err
		}
		lo, hi, tot, oth = perImage(delta, pb, o.ColdShared)
		minB, maxB, bad, others = min(minB, lo), max(maxB, hi), bad+b, others+oth
		totB = append(totB, tot)
		fmt.Fprintf(e.progress, "bench:   run %d: %d new images, %d concurrent pods each: %.0f pods/s, index fetches per image %d..%d, %.1f requests per image\n",
			r+1, o.ColdShared, o.ColdPodsPerImage, res.PodsPerSecond(), lo, hi, tot)
	}
	const sec = "4 cold images"
	t.Add(Row{Section: sec, Name: fmt.Sprintf("admissions/s, every pod a new image (%d images, %d clients); p99", o.ColdImages, o.Clients),
		Figure: fmt.Sprintf("%.0f /s; p99 %.0f ms", Median(rateA), Median(p99A)), Verdict: Info, Runs: runsText("%.0f", rateA)})
	t.Add(Row{Section: sec, Name: "index fetches (GET manifest by tag) per image, one pod each",
		Figure: rangeText(minA, maxA), Goal: "exactly 1", Verdict: verdict(minA == 1 && maxA == 1)})
	t.Add(Row{Section: sec, Name: fmt.Sprintf("index fetches per image, %d concurrent pods per image (%d images)", o.ColdPodsPerImage, o.ColdShared),
		Figure: rangeText(minB, maxB), Goal: "exactly 1", Verdict: verdict(minB == 1 && maxB == 1)})
	t.Add(Row{Section: sec, Name: fmt.Sprintf("all registry requests per image (index + %d platform manifests/configs), alone / shared", len(coldPlatforms)),
		Figure: fmt.Sprintf("%.1f / %.1f", Median(totA), Median(totB)), Verdict: Info,
		Runs: fmt.Sprintf("+%d /v2/ pings and other repos; %d pods without a decision or with an image error", others, bad)})
	return nil
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}
