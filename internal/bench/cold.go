package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
)

// ColdRepo holds the cold images: per image a new tag of its own index
// over the same platform images (the warm image's platforms, so every
// request of the mix is served), made distinct by an annotation. To the
// webhook each tag is a new image, with a digest it has never resolved
// (the resolver shares platforms by digest, so tags of one index would
// not be cold); to the registry a push is one manifest PUT (htpasswd
// makes every registry request cost a bcrypt check, so pushing fresh
// blobs per image would take minutes).
const ColdRepo = "bench/cold"

// coldTagAnnotation makes each cold tag's index distinct.
const coldTagAnnotation = "io.isamatch.bench.cold-tag"

// pushColdTags pushes the cold index once, then per tag an index with the
// same platform images annotated with the tag.
func (e *Env) pushColdTags(ctx context.Context, tags []string) error {
	idx, err := testbed.Index(warmPlatforms)
	if err != nil {
		return err
	}
	opts := e.Registry.RemoteOptions(ctx)
	if !e.coldPushed {
		ref, err := name.NewTag(e.Registry.Ref(ColdRepo, "base"), name.StrictValidation)
		if err != nil {
			return fmt.Errorf("parse cold reference: %w", err)
		}
		if err := remote.WriteIndex(ref, idx, opts...); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		e.coldIndex, e.coldPushed = idx, true
	}
	for _, tag := range tags {
		ref, err := name.NewTag(e.Registry.Ref(ColdRepo, tag), name.StrictValidation)
		if err != nil {
			return fmt.Errorf("parse cold reference: %w", err)
		}
		idx, ok := mutate.Annotations(e.coldIndex, map[string]string{coldTagAnnotation: tag}).(v1.ImageIndex)
		if !ok {
			return fmt.Errorf("annotate cold index %s: not an index", ref)
		}
		if err := remote.Put(ref, idx, opts...); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
	}
	return nil
}

// coldPhase tags images new images (each imagePods pods), creates the pods
// through the webhook and returns the load, the proxy's request counts for
// it and how many pods' decisions are missing or record an image error.
func coldPhase(ctx context.Context, e *Env, o Options, ns, prefix string, images, imagePods int) (LoadResult, map[RequestKey]int, int, error) {
	tags := make([]string, images)
	for k := range tags {
		tags[k] = fmt.Sprintf("%s-%03d", prefix, k)
	}
	if err := e.pushColdTags(ctx, tags); err != nil {
		return LoadResult{}, nil, 0, err
	}
	var pods []*corev1.Pod
	for k, tag := range tags {
		for j := range imagePods {
			pods = append(pods, LoadPod(ns, fmt.Sprintf("%s-%d", tag, j), e.Ref(ColdRepo, tag), Unscheduled, k+j))
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
		if c, err := contract.ParseDecision(p.Annotations); err != nil || len(c.Unresolved) > 0 {
			bad++
		}
	}
	return res, delta, bad, DeletePods(ctx, e.Clientset, ns)
}

// perImage summarises the request counts of one phase: the smallest and
// largest number of index resolutions (manifest HEAD by tag) per image, and all
// requests to the cold repository per image.
func perImage(delta map[RequestKey]int, prefix string, images int) (minIdx, maxIdx int, total float64) {
	tags := map[string]int{}
	for k, v := range delta {
		if k.Repo != ColdRepo {
			continue
		}
		total += float64(v)
		if k.Kind == KindTagManifest {
			tags[k.Tag] += v
		}
	}
	minIdx = -1
	for k := range images {
		n := tags[fmt.Sprintf("%s-%03d", prefix, k)]
		if minIdx < 0 || n < minIdx {
			minIdx = n
		}
		maxIdx = max(maxIdx, n)
	}
	return minIdx, maxIdx, total / float64(images)
}

// coldRows measures admissions of pods whose images are not cached.
func coldRows(ctx context.Context, e *Env, o Options, t *Table) error {
	ns := nsName("cold", Isamatch)
	if err := e.Namespace(ctx, ns, Isamatch); err != nil {
		return err
	}
	var rateA, p50A, totA, totB []float64
	minA, maxA, minB, maxB, bad := 1<<30, 0, 1<<30, 0, 0
	for r := range o.Runs {
		pa := fmt.Sprintf("r%d-a", r)
		res, delta, b, err := coldPhase(ctx, e, o, ns, pa, o.ColdImages, 1)
		if err != nil {
			return err
		}
		lo, hi, tot := perImage(delta, pa, o.ColdImages)
		minA, maxA, bad = min(minA, lo), max(maxA, hi), bad+b
		rateA, p50A, totA = append(rateA, res.PodsPerSecond()), append(p50A, ms(Percentile(res.Latencies, 0.5))), append(totA, tot)
		fmt.Fprintf(e.progress, "bench:   run %d: %d new images, one pod each: %.1f pods/s, p50 %.0f ms, index fetches per image %d..%d, %.1f requests per image\n",
			r+1, o.ColdImages, res.PodsPerSecond(), p50A[r], lo, hi, tot)

		pb := fmt.Sprintf("r%d-b", r)
		res, delta, b, err = coldPhase(ctx, e, o, ns, pb, o.ColdShared, o.ColdPodsPerImage)
		if err != nil {
			return err
		}
		lo, hi, tot = perImage(delta, pb, o.ColdShared)
		minB, maxB, bad = min(minB, lo), max(maxB, hi), bad+b
		totB = append(totB, tot)
		fmt.Fprintf(e.progress, "bench:   run %d: %d new images, %d concurrent pods each: %.1f pods/s, index fetches per image %d..%d, %.1f requests per image\n",
			r+1, o.ColdShared, o.ColdPodsPerImage, res.PodsPerSecond(), lo, hi, tot)
	}
	regMed, regN := registryGetMedian(filepath.Join(e.Registry.Dir, "registry.log"), "/v2/"+ColdRepo+"/")
	const sec = "4 cold images"
	t.Add(Row{Section: sec, Name: fmt.Sprintf("admissions/s, every pod a new image (%d images, %d clients); p50 latency", o.ColdImages, o.Clients),
		Figure: fmt.Sprintf("%.1f /s; p50 %.0f ms", Median(rateA), Median(p50A)), Verdict: Info, Runs: runsText("%.1f", rateA)})
	t.Add(Row{Section: sec, Name: "  registry time per GET (docker-registry's log; htpasswd = a bcrypt check per request)",
		Figure: fmt.Sprintf("%.0f ms", ms(regMed)), Verdict: Info, Runs: fmt.Sprintf("median of %d GETs", regN)})
	t.Add(Row{Section: sec, Name: "index resolutions (manifest HEAD by tag) per image, one pod each",
		Figure: rangeText(minA, maxA), Goal: "exactly 1", Verdict: verdict(minA == 1 && maxA == 1)})
	t.Add(Row{Section: sec, Name: fmt.Sprintf("index resolutions per image, %d concurrent pods per image (%d images)", o.ColdPodsPerImage, o.ColdShared),
		Figure: rangeText(minB, maxB), Goal: "exactly 1", Verdict: verdict(minB == 1 && maxB == 1)})
	t.Add(Row{Section: sec, Name: fmt.Sprintf("all registry requests per image (HEAD + index + %d platform manifests + %d configs), alone / shared", len(warmPlatforms), len(warmPlatforms)),
		Figure: fmt.Sprintf("%.1f / %.1f", Median(totA), Median(totB)), Verdict: Info,
		Runs: fmt.Sprintf("%d pods without a decision or with an image error", bad)})
	return nil
}

// registryGetMedian is the median http.response.duration of the GETs of
// paths under prefix in docker-registry's log, and how many there were.
func registryGetMedian(logPath, prefix string) (time.Duration, int) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	var ds []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "response completed") || !strings.Contains(line, "http.request.method=GET") ||
			!strings.Contains(line, `http.request.uri="`+prefix) {
			continue
		}
		_, rest, ok := strings.Cut(line, "http.response.duration=")
		if !ok {
			continue
		}
		v, _, _ := strings.Cut(rest, " ")
		if d, err := time.ParseDuration(strings.Trim(v, `"`)); err == nil {
			ds = append(ds, d)
		}
	}
	return Percentile(ds, 0.5), len(ds)
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}
