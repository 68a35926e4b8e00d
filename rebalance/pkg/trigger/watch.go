package trigger

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// WatchOptions says what Watch reports.
type WatchOptions struct {
	// NodeJoin reports nodes that join.
	NodeJoin bool
	// Threshold, a percentage of allocatable CPU, reports nodes whose
	// requested CPU crosses it upward; 0 turns it off.
	Threshold int64
	// Rearm is how many percentage points below Threshold a node that
	// crossed it must drop before a crossing counts again.
	Rearm int64
	// Cooldown is the shortest time between two cycles one node starts
	// (its first join and its first group label excepted: see gate).
	Cooldown time.Duration
	// Selector limits both to the nodes it matches (the policy's
	// nodeSelector); nil means every node.
	Selector labels.Selector
	// Clock is the cooldown's clock; nil means the real one.
	Clock clock.PassiveClock
}

// Watch starts node (and, with a threshold, pod) informers on client and
// calls fire for every join and upward threshold crossing after their
// initial lists that the node's cooldown allows, until ctx ends. It
// returns once the informers have synced. fire must not block.
func Watch(ctx context.Context, client kubernetes.Interface, o WatchOptions, fire func(Reason)) error {
	if !o.NodeJoin && o.Threshold <= 0 {
		return nil
	}
	sel := o.Selector
	if sel == nil {
		sel = labels.Everything()
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var mu sync.Mutex // the node and pod handlers run on two goroutines
	l := newLoads(o.Threshold, o.Rearm, sel)
	g := newGate(o.Cooldown, clk)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(trim))
	nodeChanged := func(old, cur *v1.Node, name string, initial bool) {
		mu.Lock()
		if cur == nil {
			l.forget(name)
			g.forget(name)
		}
		up := o.Threshold > 0 && cur != nil && l.setNode(name, cur)
		var r *Reason
		switch {
		case initial:
			g.observe(name, cur, usable(cur, sel))
		case o.NodeJoin && joined(old, cur, sel):
			if g.allow(name, cur, true) {
				r = &Reason{Kind: NodeJoin, Node: name}
			}
		case up:
			if g.allow(name, cur, false) {
				r = &Reason{Kind: Threshold, Node: name}
			}
		}
		mu.Unlock()
		if r != nil {
			fire(*r)
		}
	}
	if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if n, ok := obj.(*v1.Node); ok {
				nodeChanged(nil, n, n.Name, initial)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, _ := oldObj.(*v1.Node)
			if n, ok := newObj.(*v1.Node); ok {
				nodeChanged(old, n, n.Name, false)
			}
		},
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				nodeChanged(nil, nil, key, false)
			}
		},
	}); err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	if o.Threshold > 0 {
		podChanged := func(obj any, deleted, initial bool) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			p, ok := obj.(*v1.Pod)
			if !ok {
				return
			}
			mu.Lock()
			var node string
			var up bool
			if deleted {
				node, up = l.setPod(p.UID, nil)
			} else {
				node, up = l.setPod(p.UID, p)
			}
			up = up && !initial && g.allow(node, nil, false)
			mu.Unlock()
			if up {
				fire(Reason{Kind: Threshold, Node: node})
			}
		}
		if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, initial bool) { podChanged(obj, false, initial) },
			UpdateFunc: func(_, obj any) { podChanged(obj, false, false) },
			DeleteFunc: func(obj any) { podChanged(obj, true, false) },
		}); err != nil {
			return fmt.Errorf("watch pods: %w", err)
		}
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("sync the %v informer: %w", typ, context.Cause(ctx))
		}
	}
	return nil
}

// trim keeps of a node or pod only what the triggers read, so that the
// informers' copy of every pod stays small.
func trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1.Node:
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion, Labels: o.Labels},
			Spec:       v1.NodeSpec{Unschedulable: o.Spec.Unschedulable, Taints: o.Spec.Taints},
			Status:     v1.NodeStatus{Allocatable: o.Status.Allocatable, Conditions: o.Status.Conditions},
		}, nil
	case *v1.Pod:
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion},
			Spec: v1.PodSpec{
				NodeName: o.Spec.NodeName, Overhead: o.Spec.Overhead, Resources: o.Spec.Resources,
				Containers: requestsOnly(o.Spec.Containers), InitContainers: requestsOnly(o.Spec.InitContainers),
			},
			Status: v1.PodStatus{Phase: o.Status.Phase},
		}, nil
	}
	return obj, nil
}

// requestsOnly keeps of each container its name, resources and restart
// policy (a restartable init container is a sidecar, counted as long as
// the pod runs).
func requestsOnly(cs []v1.Container) []v1.Container {
	if cs == nil {
		return nil
	}
	out := make([]v1.Container, len(cs))
	for i, c := range cs {
		out[i] = v1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
	}
	return out
}
