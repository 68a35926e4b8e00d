package trigger

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// node is a Ready node with cpu allocatable and the given labels.
func node(name, cpu string, labels map[string]string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

func notReady(n *v1.Node) *v1.Node {
	n = n.DeepCopy()
	n.Status.Conditions[0].Status = v1.ConditionFalse
	return n
}

// taintedNotReady is n Ready with the not-ready taint the API server puts
// on a new node and the lifecycle controller removes a moment later.
func taintedNotReady(n *v1.Node) *v1.Node {
	n = n.DeepCopy()
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule})
	return n
}

func cordoned(n *v1.Node) *v1.Node {
	n = n.DeepCopy()
	n.Spec.Unschedulable = true
	return n
}

// pod is a running pod bound to nodeName requesting cpu.
func pod(name, nodeName, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{
			NodeName: nodeName,
			Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
			}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}
