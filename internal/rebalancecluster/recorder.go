package rebalancecluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Recorder watches the pods of a namespace from the moment it starts: which
// ones were evicted (got a deletion timestamp), in order, and the fewest
// pods of one app (label app) Ready and not terminating at any event.
type Recorder struct {
	app          string
	mu           sync.Mutex
	pods         map[string]*corev1.Pod // app's pods, by name
	evicted      map[string]bool
	order        []string // evicted pods, first seen first
	minAvailable int
	stop         func()
}

// StartRecorder lists the namespace's pods and watches them from there
// until ctx ends or Stop is called; app names the pods whose availability
// it tracks. Pods labelled app=filler are the scenes' placeholders: their
// deletion is no eviction.
func StartRecorder(ctx context.Context, c client.WithWatch, namespace, app string) (*Recorder, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	r := &Recorder{app: app, pods: map[string]*corev1.Pod{}, evicted: map[string]bool{}}
	for i := range list.Items {
		r.observe(watch.Added, &list.Items[i])
	}
	r.minAvailable = r.available()
	w, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace(namespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	r.stop = w.Stop
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				r.observe(ev.Type, p)
			}
		}
	}()
	return r, nil
}

// Stop ends the watch.
func (r *Recorder) Stop() { r.stop() }

func (r *Recorder) observe(t watch.EventType, p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.DeletionTimestamp != nil && p.Labels["app"] != "filler" && !r.evicted[p.Name] {
		r.evicted[p.Name] = true
		r.order = append(r.order, p.Name)
	}
	if p.Labels["app"] != r.app {
		return
	}
	if t == watch.Deleted {
		delete(r.pods, p.Name)
	} else {
		r.pods[p.Name] = p
	}
	r.minAvailable = min(r.minAvailable, r.available())
}

// available counts the app's pods Ready and not terminating; r.mu is held.
func (r *Recorder) available() int {
	n := 0
	for _, p := range r.pods {
		if p.DeletionTimestamp == nil && IsReady(p) {
			n++
		}
	}
	return n
}

// Evicted returns the evicted pod names in the order seen.
func (r *Recorder) Evicted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// MinAvailable is the fewest of the app's pods available at any event.
func (r *Recorder) MinAvailable() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.minAvailable
}

// WaitOlderThan waits, up to timeout, until every pod is at least age old
// by the API server's clock as the pods carry it: creation timestamps
// have whole seconds, so a pod counts once a second more has passed.
func WaitOlderThan(ctx context.Context, pods []corev1.Pod, age, timeout time.Duration) error {
	var newest time.Time
	for _, p := range pods {
		if t := p.CreationTimestamp.Time; t.After(newest) {
			newest = t
		}
	}
	ready := newest.Add(age + time.Second)
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return !time.Now().Before(ready), nil
	})
}
