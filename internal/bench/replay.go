package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// ReplayPath is where internal/bench/noopwebhook answers each pod with
// the patch recorded for its isa.request annotation (its --replay-patches).
const ReplayPath = "/replay-v1-pod"

// patchOp is one JSON patch operation (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// dryRunMix creates one pod of each request of the mix in the namespace of
// hook h, as a dry run, and returns them as the API server would store
// them.
func dryRunMix(ctx context.Context, e *Env, h Hook) ([]*corev1.Pod, error) {
	ns := nsName("adm", h)
	if err := e.Namespace(ctx, ns, h); err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for i := range len(requestMix) {
		got, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, LoadPod(ns, fmt.Sprintf("size-%d", i), e.Ref(WarmImage, "v1"), Unscheduled, i),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, fmt.Errorf("dry-run pod through %s: %w", h, err)
		}
		out = append(out, got)
	}
	return out, nil
}

// replayPatches are the patches that turn each pod of the mix, as created,
// into mutated[i] as far as isamatch writes it (annotations and node
// affinity), keyed by the pod's isa.request ("" for none).
func replayPatches(mutated []*corev1.Pod) (map[string][]patchOp, error) {
	out := map[string][]patchOp{}
	for i, m := range mutated {
		plain := LoadPod(m.Namespace, m.Name, "", "", i)
		key := plain.Annotations[isa.BareRequestAnnotation]
		var ops []patchOp
		added := map[string]string{}
		for k, v := range m.Annotations {
			if old, ok := plain.Annotations[k]; !ok || old != v {
				added[k] = v
			}
		}
		switch {
		case len(added) == 0:
		case len(plain.Annotations) == 0:
			ops = append(ops, patchOp{Op: "add", Path: "/metadata/annotations", Value: added})
		default:
			for _, k := range slices.Sorted(maps.Keys(added)) {
				ops = append(ops, patchOp{Op: "add", Path: "/metadata/annotations/" + escapePointer(k), Value: added[k]})
			}
		}
		if m.Spec.Affinity != nil {
			ops = append(ops, patchOp{Op: "add", Path: "/spec/affinity", Value: m.Spec.Affinity})
		}
		if len(m.Spec.SchedulingGates) > 0 {
			return nil, fmt.Errorf("pod with request %q was gated: the image cache is not warm", key)
		}
		out[key] = ops
	}
	return out, nil
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// writeReplayPatches writes replayPatches(mutated) to path.
func writeReplayPatches(path string, mutated []*corev1.Pod) error {
	p, err := replayPatches(mutated)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode the replay patches: %w", err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return fmt.Errorf("write the replay patches: %w", err)
	}
	return nil
}

// sameWrites reports how got differs from want in what isamatch writes
// (annotations and node affinity), or "" when it does not.
func sameWrites(want, got *corev1.Pod) string {
	if !equality.Semantic.DeepEqual(want.Annotations, got.Annotations) {
		return fmt.Sprintf("annotations %v, want %v", got.Annotations, want.Annotations)
	}
	if !equality.Semantic.DeepEqual(want.Spec.Affinity, got.Spec.Affinity) {
		return fmt.Sprintf("affinity %v, want %v", got.Spec.Affinity, want.Spec.Affinity)
	}
	return ""
}
