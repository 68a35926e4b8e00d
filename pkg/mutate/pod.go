package mutate

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The pod projection: what the webhook decodes of a pod, and the part of it
// the patch is computed over.

// podFields is what the webhook reads of a pod: its metadata and the few
// fields of its spec that decide or constrain placement.
type podFields struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		NodeName           string                        `json:"nodeName"`
		NodeSelector       map[string]string             `json:"nodeSelector"`
		ServiceAccountName string                        `json:"serviceAccountName"`
		ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets"`
		InitContainers     []containerImage              `json:"initContainers"`
		Containers         []containerImage              `json:"containers"`
		Affinity           *corev1.Affinity              `json:"affinity"`
		SchedulingGates    []corev1.PodSchedulingGate    `json:"schedulingGates"`
		// TopologySpreadConstraints are read to leave a pod's own alone and
		// written when it has none (engine/spread.go).
		TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	} `json:"spec"`
}

type containerImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// Env is read to leave a container's own QEMU_CPU alone and written
	// to add isamatch's (qemuenv.go).
	Env []corev1.EnvVar `json:"env"`
}

// decodePod decodes an admission request's pod as the API machinery's JSON
// serializer does (sigs.k8s.io/json: case-sensitive, integers kept). The
// fields podFields does not name, most of a real pod, are skipped.
func decodePod(raw []byte, pod *podFields) error {
	if len(raw) == 0 {
		return errors.New("there is no content to decode")
	}
	return utiljson.Unmarshal(raw, pod)
}

// patchedFields is the part of a pod the webhook may change: the decision
// annotations, the node affinity, the scheduling gates (it adds
// isa.ResolveGate), the topology spread constraints (it adds them to a
// pod that has none) and its containers' env (it adds QEMU_CPU to a pod it
// routes to emulation). The patch is the difference of this
// projection before and after the decision, so it names only those paths:
// the pod's other annotations, its pod (anti-)affinity and every field of
// it this webhook does not know (a newer API server's) are never touched,
// and no copy of the whole pod is parsed again.
func patchedFields(pod *podFields) any {
	type metadata struct {
		// A pointer: the pod's annotations exist but hold no decision yet
		// is {}, so the patch adds one key instead of replacing the map.
		Annotations *map[string]string `json:"annotations,omitempty"`
	}
	type affinity struct {
		NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`
	}
	// A container's env, at the container's index: the patch adds
	// QEMU_CPU to it and touches no other field of the container.
	type containerEnv struct {
		Env []corev1.EnvVar `json:"env,omitempty"`
	}
	type spec struct {
		Affinity        *affinity                         `json:"affinity,omitempty"`
		SchedulingGates []corev1.PodSchedulingGate        `json:"schedulingGates,omitempty"`
		Spread          []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
		InitContainers  []containerEnv                    `json:"initContainers,omitempty"`
		Containers      []containerEnv                    `json:"containers,omitempty"`
	}
	var out struct {
		Metadata metadata `json:"metadata"`
		Spec     spec     `json:"spec"`
	}
	if pod.Annotations != nil {
		ours := map[string]string{}
		for _, k := range []string{isa.DecisionAnnotation, isa.DecisionCountsAnnotation} {
			if v, ok := pod.Annotations[k]; ok {
				ours[k] = v
			}
		}
		out.Metadata.Annotations = &ours
	}
	if pod.Spec.Affinity != nil {
		out.Spec.Affinity = &affinity{pod.Spec.Affinity.NodeAffinity}
	}
	out.Spec.SchedulingGates = pod.Spec.SchedulingGates
	out.Spec.Spread = pod.Spec.TopologySpreadConstraints
	for _, c := range pod.Spec.InitContainers {
		out.Spec.InitContainers = append(out.Spec.InitContainers, containerEnv{c.Env})
	}
	for _, c := range pod.Spec.Containers {
		out.Spec.Containers = append(out.Spec.Containers, containerEnv{c.Env})
	}
	return out
}

// podInput reads pod's requests with the keys the options choose
// (engine.ReadRequests) and its own node constraints, which the engine
// ranks the groups by.
func (p *PodMutator) podInput(pod *podFields) (in engine.Input, warnings []engine.Warning, msg string) {
	in, warnings, msg = engine.ReadRequests(pod.Annotations, pod.Labels, p.opts.Keys)
	in.Own = ownConstraints(pod)
	return in, warnings, msg
}
