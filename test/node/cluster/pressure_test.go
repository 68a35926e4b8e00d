package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPressure(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		}},
	}
	if got := pressure(node); got != "" {
		t.Errorf("healthy node: pressure() = %q, want empty", got)
	}
	node.Status.Conditions[1] = corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue,
		Reason: "KubeletHasDiskPressure", Message: "kubelet has disk pressure"}
	node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule}}
	got := pressure(node)
	for _, want := range []string{"node n1", "condition DiskPressure (KubeletHasDiskPressure: kubelet has disk pressure)",
		"taint node.kubernetes.io/disk-pressure:NoSchedule"} {
		if !strings.Contains(got, want) {
			t.Errorf("pressure() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "condition Ready") {
		t.Errorf("pressure() = %q names the Ready condition", got)
	}
}

func TestCheckDisk(t *testing.T) {
	if err := CheckDisk("/nonexistent/isamatch"); err == nil || !strings.Contains(err.Error(), "/nonexistent/isamatch") {
		t.Errorf("CheckDisk(missing dir) = %v, want an error naming the directory", err)
	}
	// The test's own temporary directory: either enough room or an error
	// that names the need and the fix.
	if err := CheckDisk(t.TempDir()); err != nil && !strings.Contains(err.Error(), "at least 4 GiB") {
		t.Errorf("CheckDisk() = %v, want nil or the limit named", err)
	}
}
