package misplace

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// typicalPod is a Deployment's running pod as the API server serves it:
// managed fields, environment, volumes, probes, a decision.
func typicalPod() *corev1.Pod {
	yes := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c8b6f5-x2k4q", Namespace: "shop", UID: "0d3c6c3e-7f0a-4d8e-9b1a-2f6c5e4d3b2a",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9c8b6f5", "tier": "frontend"},
			Annotations:     map[string]string{isa.DecisionCountsAnnotation: `{"requiredNodes":12,"tiers":[{"weight":100,"groups":1,"nodes":8}]}`, isa.DecisionAnnotation: `request=none; images: reg.example/shop/web:v1.4.2 [linux/amd64 linux/arm64]; required: arch amd64,arm64 (12 nodes now); tiers: w100 affinity 1.00: 1 group, 8 nodes (exact fit)`},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c8b6f5", UID: "5f1e", Controller: &yes}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: "Update", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(fieldsJSON(2048)))}, {Manager: "kubelet", Operation: "Update", Subresource: "status", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(fieldsJSON(1536)))}},
		},
	}
	for k := range 2 {
		c := corev1.Container{Name: fmt.Sprintf("c%d", k), Image: "reg.example/shop/web:v1.4.2",
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}}
		for e := range 12 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", e), Value: "a-value-of-some-length"})
		}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/web"}, {Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Ready: true, RestartCount: 0,
			Image: c.Image, ImageID: "reg.example/shop/web@sha256:" + fmt.Sprintf("%064d", k), ContainerID: "containerd://" + fmt.Sprintf("%064d", k),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
	pod.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web"}}}}}
	pod.Spec.NodeName = "node-17"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	return pod
}

// BenchmarkInformerPodBytes reports, side by side, the encoded size of a
// typical pod as the informer receives it and as Slim keeps it: a proxy
// for what each cached pod costs the webhook's leader.
func BenchmarkInformerPodBytes(b *testing.B) {
	full := typicalPod()
	for _, tc := range []struct {
		name string
		pod  func() *corev1.Pod
	}{
		{"full", func() *corev1.Pod { return full }},
		{"slim", func() *corev1.Pod { s, _ := Slim(full); return s.(*corev1.Pod) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				raw, err := json.Marshal(tc.pod())
				if err != nil {
					b.Fatal(err)
				}
				n = len(raw)
			}
			b.ReportMetric(float64(n), "bytes/pod")
		})
	}
}

// fieldsJSON is managed fields JSON of about n bytes.
func fieldsJSON(n int) []byte {
	out := []byte(`{"f:spec":{`)
	for k := 0; len(out) < n; k++ {
		out = fmt.Appendf(out, `"f:field%d":{},`, k)
	}
	return append(out[:len(out)-1], "}}"...)
}
