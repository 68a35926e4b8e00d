package misplace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// decidedFailedPod is a decided pod of a ReplicaSet on n1 whose container
// app died of SIGILL.
func decidedFailedPod() *corev1.Pod {
	yes := true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-u1", Namespace: "ns", UID: "u1",
		Annotations:     map[string]string{isa.RequestAnnotation: "x86-64-v2", isa.DecisionCountsAnnotation: `{"requiredNodes":1}`},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "owner", UID: "owner-uid", Controller: &yes}}}}
	pod.Spec.NodeName = "n1"
	pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "reg/app:v1"}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", LastTerminationState: corev1.ContainerState{Terminated: terminated(132, 0, "Error", "")}}}
	return pod
}

func TestSlim(t *testing.T) {
	pod := decidedFailedPod()
	pod.Annotations["other"] = strings.Repeat("x", 1<<10)
	pod.Annotations[isa.BareRequestAnnotation] = strings.Repeat("v", 2*maxValue)
	pod.Labels = map[string]string{"app": "a", isa.RequestLabel: "rv64gc"}
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SECRET", Value: "s"}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "v"}}
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message = runcExecFormat + strings.Repeat(" padding", 100) + ": exec format error"
	obj, err := Slim(pod)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*corev1.Pod)
	if len(s.ManagedFields) != 0 || len(s.Spec.Volumes) != 0 || len(s.Spec.Containers[0].Env) != 0 || s.Annotations["other"] != "" || s.Labels["app"] != "" {
		t.Errorf("Slim kept what nothing reads: %+v", s)
	}
	if s.Labels[isa.RequestLabel] != "rv64gc" || s.Annotations[isa.DecisionCountsAnnotation] == "" || len(s.Annotations[isa.BareRequestAnnotation]) != maxValue {
		t.Errorf("Slim lost or did not bound what is read: %v %v", s.Labels, s.Annotations)
	}
	if diff := cmp.Diff(Detect(pod)[0].Reason, Detect(s)[0].Reason); diff != "" {
		t.Errorf("Detect differs on the slim pod (-full +slim):\n%s", diff)
	}
	if _, ok := Decision(s); !ok || metav1.GetControllerOf(s) == nil {
		t.Errorf("Slim lost the decision or the controller")
	}
}
