package rebalancecluster

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubelets is the set of namespaces whose pods simulateKubelets plays the
// kubelets' part for.
type kubelets struct {
	mu         sync.Mutex
	namespaces map[string]bool
}

func (k *kubelets) add(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.namespaces == nil {
		k.namespaces = map[string]bool{}
	}
	k.namespaces[ns] = true
}

func (k *kubelets) has(ns string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.namespaces[ns]
}

// simulateKubelets does, for the pods of k's namespaces, what the kubelets
// of the simulated nodes would, until ctx ends: a pod bound to a node
// turns Running and Ready (the disruption controller counts only Ready
// pods as healthy), and a terminating pod is removed (grace period 0), as
// a kubelet does once its containers have stopped. Errors are retried on
// the next pass (conflicts with the controllers are expected).
func simulateKubelets(ctx context.Context, c client.Client, k *kubelets) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods); err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if !k.has(p.Namespace) {
					continue
				}
				switch {
				case p.DeletionTimestamp != nil:
					_ = c.Delete(ctx, p, client.GracePeriodSeconds(0))
				case p.Spec.NodeName != "" && !IsReady(p):
					setRunning(p)
					_ = c.Status().Update(ctx, p)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// IsReady reports whether the pod's Ready condition is true.
func IsReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// setRunning gives p the status of a started, ready pod.
func setRunning(p *corev1.Pod) {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = nil
	for _, ctr := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
}
