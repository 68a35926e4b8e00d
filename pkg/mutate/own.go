package mutate

import (
	"crypto/sha256"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/inventory"
)

// Ranking among the nodes a pod can use.
//
// The tiers rank ISA groups; a pod whose own spec.nodeSelector or required
// node affinity confines it to some nodes (a node pool, a zone) can only
// use the groups' nodes those admit. Ranked over the whole cluster, such a
// pod's best tier may name groups it cannot use: the scheduler then
// normalises the tiers it can use, across architectures too, and a richer
// node of another architecture can outscore the plainest node of the
// pod's own (a multi-architecture pod confined to a pool without the
// cluster's leanest arm64 nodes preferred an x86-64-v4 node of tier 2 over
// the pool's plainest arm64 node of tier 3). So the groups are ranked by
// the nodes the pod's own constraints admit, as the scheduler evaluates
// them (k8s.io/component-helpers' nodeaffinity): a group none of whose
// nodes they admit is left out, and a group's size is what they admit of
// it. When they admit no node of any ranked group, the groups are ranked
// over every node as before, so that nodes which join later are ordered.

// ownNodes is a pod's own node constraints.
type ownNodes struct {
	// key identifies the constraints in the ranking memo.
	key [sha256.Size]byte
	sel nodeaffinity.RequiredNodeAffinity
}

// ownConstraints returns the pod's own node constraints, nil when it has
// none (or when they do not parse: the API server refuses such pods).
func ownConstraints(pod *podFields) *ownNodes {
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

// admitted counts the members of g the constraints admit.
func (o *ownNodes) admitted(g *inventory.Group) int {
	n := 0
	node := &corev1.Node{}
	for _, m := range g.Members {
		node.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Labels: m.Labels}
		if ok, err := o.sel.Match(node); ok && err == nil {
			n++
		}
	}
	return n
}
