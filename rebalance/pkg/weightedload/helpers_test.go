package weightedload

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

func node(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

// pod is a ReplicaSet's Burstable pod requesting cpu, restartPolicy Always.
func pod(name, nodeName, cpu string, mod ...func(*v1.Pod)) *v1.Pod {
	ctl := true
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: &ctl}},
		},
		Spec: v1.PodSpec{
			NodeName:      nodeName,
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning, QOSClass: v1.PodQOSBurstable},
	}
	for _, m := range mod {
		m(p)
	}
	return p
}

func restart(r v1.RestartPolicy) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.RestartPolicy = r } }

func guaranteed(p *v1.Pod) { p.Status.QOSClass = v1.PodQOSGuaranteed }

func emptyDir(p *v1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
}

// podsOnFunc is a GetPodsAssignedToNodeFunc over a fixed list of pods.
func podsOnFunc(pods []*v1.Pod) podutil.GetPodsAssignedToNodeFunc {
	return func(nodeName string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		var out []*v1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == nodeName && (filter == nil || filter(p)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
}
