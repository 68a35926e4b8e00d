package mutate

import (
	"crypto/sha256"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// ownNodes is a pod's own node constraints (engine.Input.Own), evaluated
// as the scheduler evaluates them (k8s.io/component-helpers'
// nodeaffinity), so that the engine ranks the groups by the nodes the pod
// can use.
type ownNodes struct {
	// key identifies the constraints in the ranking memo.
	key [sha256.Size]byte
	sel nodeaffinity.RequiredNodeAffinity
}

var _ engine.NodeConstraints = (*ownNodes)(nil)

// ownConstraints returns the pod's own node constraints, nil when it has
// none (or when they do not parse: the API server refuses such pods).
func ownConstraints(pod *podFields) engine.NodeConstraints {
	var required *corev1.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(pod.Spec.NodeSelector) == 0 && (required == nil || len(required.NodeSelectorTerms) == 0) {
		return nil
	}
	raw, err := json.Marshal(struct {
		S map[string]string    `json:"s,omitempty"`
		R *corev1.NodeSelector `json:"r,omitempty"`
	}{pod.Spec.NodeSelector, required})
	if err != nil {
		return nil
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: pod.Spec.NodeSelector}}
	if required != nil {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}}
	}
	return &ownNodes{key: sha256.Sum256(raw), sel: nodeaffinity.GetRequiredNodeAffinity(p)}
}

// MemoKey implements engine.NodeConstraints: a hash of the constraints.
func (o *ownNodes) MemoKey() []byte { return o.key[:] }

// Admits implements engine.NodeConstraints: the node's name and labels
// match the pod's nodeSelector and required node affinity.
func (o *ownNodes) Admits(m engine.Member) bool {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Labels: m.Labels}}
	ok, err := o.sel.Match(node)
	return ok && err == nil
}
