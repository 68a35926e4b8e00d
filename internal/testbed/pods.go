package testbed

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultPodImage is the image MakePod starts with. Pods on simulated nodes
// never run, so it is never pulled.
const DefaultPodImage = "registry.k8s.io/pause:3.10"

// PodWrapper builds a Pod with one container named "main":
//
//	MakePod("p1", "default").Image(img).Request("500m", "1Gi").Annotation(k, v).Obj()
type PodWrapper struct{ pod corev1.Pod }

// MakePod starts a pod with one container running DefaultPodImage.
func MakePod(name, namespace string) *PodWrapper {
	return &PodWrapper{pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: DefaultPodImage}},
		},
	}}
}

// Image sets the image of the main container.
func (w *PodWrapper) Image(image string) *PodWrapper {
	w.pod.Spec.Containers[0].Image = image
	return w
}

// Container adds another container.
func (w *PodWrapper) Container(name, image string) *PodWrapper {
	w.pod.Spec.Containers = append(w.pod.Spec.Containers, corev1.Container{Name: name, Image: image})
	return w
}

// InitContainer adds an init container.
func (w *PodWrapper) InitContainer(name, image string) *PodWrapper {
	w.pod.Spec.InitContainers = append(w.pod.Spec.InitContainers, corev1.Container{Name: name, Image: image})
	return w
}

// Request sets the main container's CPU and memory requests; an empty
// string leaves that resource unset.
func (w *PodWrapper) Request(cpu, memory string) *PodWrapper {
	w.pod.Spec.Containers[0].Resources.Requests = resources(w.pod.Spec.Containers[0].Resources.Requests, cpu, memory)
	return w
}

// Limit sets the main container's CPU and memory limits.
func (w *PodWrapper) Limit(cpu, memory string) *PodWrapper {
	w.pod.Spec.Containers[0].Resources.Limits = resources(w.pod.Spec.Containers[0].Resources.Limits, cpu, memory)
	return w
}

func resources(list corev1.ResourceList, cpu, memory string) corev1.ResourceList {
	if list == nil {
		list = corev1.ResourceList{}
	}
	if cpu != "" {
		list[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		list[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return list
}

// Annotation sets an annotation.
func (w *PodWrapper) Annotation(k, v string) *PodWrapper {
	if w.pod.Annotations == nil {
		w.pod.Annotations = map[string]string{}
	}
	w.pod.Annotations[k] = v
	return w
}

// Label sets a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	if w.pod.Labels == nil {
		w.pod.Labels = map[string]string{}
	}
	w.pod.Labels[k] = v
	return w
}

// NodeSelector adds a nodeSelector entry.
func (w *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if w.pod.Spec.NodeSelector == nil {
		w.pod.Spec.NodeSelector = map[string]string{}
	}
	w.pod.Spec.NodeSelector[k] = v
	return w
}

// NodeAffinity adds a required node-affinity requirement to every existing
// term (creating the first one), so it is ANDed with what is there.
func (w *PodWrapper) NodeAffinity(key string, op corev1.NodeSelectorOperator, values ...string) *PodWrapper {
	req := corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	sel := w.requiredSelector()
	if len(sel.NodeSelectorTerms) == 0 {
		sel.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range sel.NodeSelectorTerms {
		sel.NodeSelectorTerms[i].MatchExpressions = append(sel.NodeSelectorTerms[i].MatchExpressions, req)
	}
	return w
}

// NodeAffinityTerm adds a required node-selector term, ORed with the others.
func (w *PodWrapper) NodeAffinityTerm(reqs ...corev1.NodeSelectorRequirement) *PodWrapper {
	sel := w.requiredSelector()
	sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: reqs})
	return w
}

// PreferredNodeAffinity adds a preferred node-affinity term.
func (w *PodWrapper) PreferredNodeAffinity(weight int32, reqs ...corev1.NodeSelectorRequirement) *PodWrapper {
	na := w.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: reqs}})
	return w
}

func (w *PodWrapper) nodeAffinity() *corev1.NodeAffinity {
	if w.pod.Spec.Affinity == nil {
		w.pod.Spec.Affinity = &corev1.Affinity{}
	}
	if w.pod.Spec.Affinity.NodeAffinity == nil {
		w.pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	return w.pod.Spec.Affinity.NodeAffinity
}

func (w *PodWrapper) requiredSelector() *corev1.NodeSelector {
	na := w.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	return na.RequiredDuringSchedulingIgnoredDuringExecution
}

// Toleration adds a toleration.
func (w *PodWrapper) Toleration(t corev1.Toleration) *PodWrapper {
	w.pod.Spec.Tolerations = append(w.pod.Spec.Tolerations, t)
	return w
}

// ImagePullSecret references a pull secret by name.
func (w *PodWrapper) ImagePullSecret(name string) *PodWrapper {
	w.pod.Spec.ImagePullSecrets = append(w.pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	return w
}

// SchedulerName sets the scheduler that should place the pod.
func (w *PodWrapper) SchedulerName(name string) *PodWrapper {
	w.pod.Spec.SchedulerName = name
	return w
}

// Obj returns a copy of the pod.
func (w *PodWrapper) Obj() *corev1.Pod { return w.pod.DeepCopy() }

// IsScheduled reports whether the pod is bound to a node.
func IsScheduled(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

// IsUnschedulable reports whether the scheduler tried and found no node.
func IsUnschedulable(pod *corev1.Pod) bool {
	c := scheduledCondition(pod)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
}

func scheduledCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// defaultWait bounds a wait whose context has no deadline.
const defaultWait = 2 * time.Minute

// WaitScheduled waits until every pod is bound to a node and refreshes pods
// in place. On timeout the error lists the pods still pending with the
// scheduler's reason.
func WaitScheduled(ctx context.Context, c client.Reader, pods []*corev1.Pod) error {
	return waitPods(ctx, c, pods, "scheduled", IsScheduled)
}

// WaitSettled waits until every pod is either bound or marked Unschedulable
// by the scheduler, and refreshes pods in place.
func WaitSettled(ctx context.Context, c client.Reader, pods []*corev1.Pod) error {
	return waitPods(ctx, c, pods, "scheduled or unschedulable", func(p *corev1.Pod) bool {
		return IsScheduled(p) || IsUnschedulable(p)
	})
}

// waitPods polls the pods' namespaces (one List per namespace per round, so
// a thousand pods cost a few requests) until done holds for every pod.
func waitPods(ctx context.Context, c client.Reader, pods []*corev1.Pod, what string, done func(*corev1.Pod) bool) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultWait)
		defer cancel()
	}
	byNS := map[string][]*corev1.Pod{}
	for _, p := range pods {
		byNS[p.Namespace] = append(byNS[p.Namespace], p)
	}
	for {
		pending, err := refreshPods(ctx, c, byNS, done)
		if err == nil && len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("wait for pods to be %s: %w", what, err)
			}
			return fmt.Errorf("%d of %d pods not %s: %s", len(pending), len(pods), what, describePending(pending))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func refreshPods(ctx context.Context, c client.Reader, byNS map[string][]*corev1.Pod, done func(*corev1.Pod) bool) ([]*corev1.Pod, error) {
	var pending []*corev1.Pod
	for ns, want := range byNS {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		got := make(map[string]*corev1.Pod, len(list.Items))
		for i := range list.Items {
			got[list.Items[i].Name] = &list.Items[i]
		}
		for _, p := range want {
			if g, ok := got[p.Name]; ok {
				*p = *g
			}
			if !done(p) {
				pending = append(pending, p)
			}
		}
	}
	return pending, nil
}

// describePending names up to 10 pods with the scheduler's last word on them.
func describePending(pods []*corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		why := "not tried yet"
		if c := scheduledCondition(p); c != nil {
			why = c.Reason + ": " + c.Message
		}
		parts = append(parts, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, why))
	}
	sort.Strings(parts)
	if len(parts) > 10 {
		parts = append(parts[:10], fmt.Sprintf("and %d more", len(parts)-10))
	}
	return strings.Join(parts, "; ")
}
