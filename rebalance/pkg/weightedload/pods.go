package weightedload

import (
	"cmp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/descheduler/pkg/utils"

	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// vec holds one value per dimension, in the order of usage.Dimensions.
type vec [4]float64

// The indexes of the dimensions in a vec.
const (
	cpuDim = iota
	memDim
	netDim
	diskDim
)

// requests are the pod's CPU (millicores) and memory (bytes) requests, as
// the scheduler counts them (init containers and overhead included).
func requests(p *v1.Pod) vec {
	req, _ := utils.PodRequestsAndLimits(p)
	return vec{cpuDim: float64(req.Cpu().MilliValue()), memDim: float64(req.Memory().Value())}
}

// podUse is what p uses in this cycle: per dimension its measured value
// when the dimension is measured and the source knows the pod, else its
// requests (CPU and memory) or nothing (network and disk: no pod moves
// for them without a pod query).
func podUse(p *v1.Pod, snap usage.Snapshot) vec {
	out := requests(p)
	measured := snap.Pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
	for i, d := range usage.Dimensions {
		if snap.Sources[d] == "" {
			continue
		}
		if v, ok := measured[d]; ok {
			out[i] = v
		} else if i == netDim || i == diskDim {
			out[i] = 0
		}
	}
	return out
}

// finished reports whether p no longer holds resources.
func finished(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// movable reports whether the source's rules allow moving the pod at all:
// not restartPolicy Never (its work would be lost), no local storage (its
// state lives on the node), and some request (else the scheduler would
// place it anywhere, and moving it proves nothing).
func movable(p *v1.Pod) bool {
	if p.Spec.RestartPolicy == v1.RestartPolicyNever || utils.IsPodWithLocalStorage(p) || p.DeletionTimestamp != nil {
		return false
	}
	r := requests(p)
	return r[cpuDim] > 0 || r[memDim] > 0
}

// evictionOrder sorts the candidates of one node: OnFailure before Always,
// Burstable before Guaranteed (BestEffort pods request nothing and are not
// candidates), then the larger CPU use first (use as the cycle measures
// it, see podUse), then by name.
func evictionOrder(use func(*v1.Pod) vec) func(a, b *v1.Pod) int {
	restart := func(p *v1.Pod) int {
		if p.Spec.RestartPolicy == v1.RestartPolicyOnFailure {
			return 0
		}
		return 1
	}
	qos := func(p *v1.Pod) int {
		if p.Status.QOSClass == v1.PodQOSGuaranteed {
			return 1
		}
		return 0
	}
	return func(a, b *v1.Pod) int {
		return cmp.Or(cmp.Compare(restart(a), restart(b)), cmp.Compare(qos(a), qos(b)), cmp.Compare(use(b)[cpuDim], use(a)[cpuDim]),
			strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	}
}
