package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Unscheduled is a scheduler name no scheduler serves: admission pods
// carry it so that binding adds no load while admission is measured.
const Unscheduled = "bench-unscheduled"

// requestMix is what the pods of a load ask for, in turn: nothing (the
// image's architectures only), RISC-V ISAs, an x86-64 level, an arm64
// feature. Every one is served by the nodes of GroupISAs(n) for n >= 20.
var requestMix = []string{"", "rv64gc", "rv64gc_zba_zbb", "x86-64-v3", "arm64+sve"}

// LoadPod is the i-th pod of a load: the warm multi-architecture image, a
// small CPU request, and requestMix[i%len] as isa.request. Like a
// Deployment's pods, the pods asking the same carry the same labels
// (LoadLabels); OwnByReplicaSets gives them an owner too.
func LoadPod(ns, name, image, scheduler string, i int) *corev1.Pod {
	w := testbed.MakePod(name, ns).Image(image).Request("10m", "16Mi")
	for k, v := range LoadLabels(i) {
		w = w.Label(k, v)
	}
	if r := requestMix[i%len(requestMix)]; r != "" {
		w = w.Annotation(isa.BareRequestAnnotation, r)
	}
	if scheduler != "" {
		w = w.SchedulerName(scheduler)
	}
	return w.Obj()
}

// LoadLabels are the labels of the i-th load pod: one set per entry of
// requestMix, as the pods of one Deployment share theirs.
func LoadLabels(i int) map[string]string {
	k := i % len(requestMix)
	return map[string]string{"app": fmt.Sprintf("load-%d", k), "pod-template-hash": fmt.Sprintf("h%d", k)}
}

// OwnByReplicaSets creates in ns one ReplicaSet per set of LoadLabels
// (with no controller running, it creates no pod) and makes each of pods
// its controller-owned pod, as a Deployment's are: the scheduler's default
// topology spreading then applies to the pods that set no constraints of
// their own, as it does to real workloads.
func OwnByReplicaSets(ctx context.Context, cs kubernetes.Interface, ns string, pods []*corev1.Pod) error {
	owners := map[string]metav1.OwnerReference{}
	for k := range requestMix {
		labels := LoadLabels(k)
		zero := int32(0)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: labels["app"], Namespace: ns, Labels: labels},
			Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "unused"}}}}},
		}
		got, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			if got, err = cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create ReplicaSet %s/%s: %w", ns, rs.Name, err)
			}
		}
		yes := true
		owners[rs.Name] = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: got.Name, UID: got.UID, Controller: &yes, BlockOwnerDeletion: &yes}
	}
	for _, p := range pods {
		o, ok := owners[p.Labels["app"]]
		if !ok {
			return fmt.Errorf("pod %s has no load labels", p.Name)
		}
		p.OwnerReferences = []metav1.OwnerReference{o}
	}
	return nil
}

// LoadResult is one timed creation of pods.
type LoadResult struct {
	Latencies []time.Duration
	Elapsed   time.Duration
	Start     time.Time
}

// PodsPerSecond is the creation throughput.
func (r LoadResult) PodsPerSecond() float64 {
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// CreatePods creates pods through the API server from clients concurrent
// goroutines and times each create.
func CreatePods(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod, clients int) (LoadResult, error) {
	work := make(chan *corev1.Pod)
	lat := make([]time.Duration, 0, len(pods))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for p := range work {
				t := time.Now()
				_, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
				d := time.Since(t)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
					}
					mu.Unlock()
					continue
				}
				mine = append(mine, d)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
feed:
	for _, p := range pods {
		select {
		case work <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	res := LoadResult{Latencies: lat, Elapsed: time.Since(start), Start: start}
	if firstErr != nil {
		return res, firstErr
	}
	return res, ctx.Err()
}

// DeletePods force-deletes every pod of ns (grace period 0: no kubelet
// runs) and waits until none is left.
func DeletePods(ctx context.Context, cs kubernetes.Interface, ns string) error {
	zero := int64(0)
	if err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete pods of %s: %w", ns, err)
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, fmt.Errorf("list pods of %s: %w", ns, err)
		}
		return len(l.Items) == 0, nil
	})
}

// BindWatcher counts the pods of a namespace the scheduler has bound, from
// a watch opened before the pods are created. The API server may close a
// watch at any time: Wait then lists the pods and watches again from the
// list's resourceVersion.
type BindWatcher struct {
	cs    kubernetes.Interface
	ns    string
	w     watch.Interface
	bound map[string]bool
}

// WatchBinds opens the watch.
func WatchBinds(ctx context.Context, cs kubernetes.Interface, ns string) (*BindWatcher, error) {
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("watch pods of %s: %w", ns, err)
	}
	return &BindWatcher{cs: cs, ns: ns, w: w, bound: map[string]bool{}}, nil
}

// Stop closes the watch.
func (b *BindWatcher) Stop() { b.w.Stop() }

// rewatch lists the pods, counts the bound ones and watches again.
func (b *BindWatcher) rewatch(ctx context.Context) error {
	b.w.Stop()
	list, err := b.cs.CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods of %s after the watch closed: %w", b.ns, err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			b.bound[p.Name] = true
		}
	}
	b.w, err = b.cs.CoreV1().Pods(b.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return fmt.Errorf("watch pods of %s again: %w", b.ns, err)
	}
	return nil
}

// Wait returns when n pods are bound, with the time the last bind was
// seen, or fails after timeout.
func (b *BindWatcher) Wait(ctx context.Context, n int, timeout time.Duration) (time.Time, error) {
	defer func() { b.w.Stop() }()
	deadline := time.After(timeout)
	for len(b.bound) < n {
		select {
		case ev, ok := <-b.w.ResultChan():
			if !ok || ev.Type == watch.Error {
				if err := b.rewatch(ctx); err != nil {
					return time.Time{}, err
				}
				continue
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && pod.Spec.NodeName != "" {
				b.bound[pod.Name] = true
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("only %d of %d pods bound after %s", len(b.bound), n, timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
	return time.Now(), nil
}

// HoldGate is the scheduling gate that keeps pods from the scheduler until
// Ungate removes it.
const HoldGate = "bench.isamatch.io/hold"

// Gate adds HoldGate to every pod.
func Gate(pods []*corev1.Pod) []*corev1.Pod {
	for _, p := range pods {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: HoldGate})
	}
	return pods
}

// Ungate removes the scheduling gates of pods from clients concurrent
// goroutines and returns when it started.
func Ungate(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod, clients int) (time.Time, error) {
	patch := []byte(`{"spec":{"schedulingGates":null}}`)
	work := make(chan *corev1.Pod)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if _, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("ungate pod %s/%s: %w", p.Namespace, p.Name, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range pods {
		work <- p
	}
	close(work)
	wg.Wait()
	return start, firstErr
}
