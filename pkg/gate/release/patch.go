package release

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// MergePatch is the JSON merge patch (RFC 7386) from pod to next carrying
// pod's resourceVersion, so the API server refuses it with a Conflict when
// the pod changed since it was read: what controller-runtime's
// MergeFromWithOptimisticLock sends. Only the fields that differ are sent,
// so fields this program's k8s.io/api does not know are never dropped.
func MergePatch(pod, next *corev1.Pod) ([]byte, error) {
	version := pod.ResourceVersion
	if version == "" {
		return nil, fmt.Errorf("pod %s/%s has no resourceVersion to lock the patch on", pod.Namespace, pod.Name)
	}
	from, to := pod.DeepCopy(), next.DeepCopy()
	from.ResourceVersion, to.ResourceVersion = "", version
	a, err := json.Marshal(from)
	if err != nil {
		return nil, fmt.Errorf("encode pod: %w", err)
	}
	b, err := json.Marshal(to)
	if err != nil {
		return nil, fmt.Errorf("encode released pod: %w", err)
	}
	return jsonpatch.CreateMergePatch(a, b)
}

// ClientsetPatcher patches with client-go: MergePatch, sent as a merge
// patch.
func ClientsetPatcher(cs kubernetes.Interface) Patcher {
	return func(ctx context.Context, pod, next *corev1.Pod) error {
		data, err := MergePatch(pod, next)
		if err != nil {
			return err
		}
		_, err = cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	}
}
