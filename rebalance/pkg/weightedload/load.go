package weightedload

import (
	"cmp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/descheduler/pkg/utils"
)

// load is what the pods on one node request against its allocatable, in
// millicores and bytes.
type load struct {
	node               *v1.Node
	cpu, mem           float64
	allocCPU, allocMem float64
	// owners counts the node's pods per controlling owner.
	owners map[types.UID]int
}

func newLoad(node *v1.Node, pods []*v1.Pod) *load {
	l := &load{
		node:     node,
		allocCPU: float64(node.Status.Allocatable.Cpu().MilliValue()),
		allocMem: float64(node.Status.Allocatable.Memory().Value()),
		owners:   map[types.UID]int{},
	}
	for _, p := range pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		c, m := requests(p)
		l.cpu += c
		l.mem += m
		if o := owner(p); o != "" {
			l.owners[o]++
		}
	}
	return l
}

// requests are the pod's CPU (millicores) and memory (bytes) requests, as
// the scheduler counts them (init containers and overhead included).
func requests(p *v1.Pod) (cpu, mem float64) {
	req, _ := utils.PodRequestsAndLimits(p)
	return float64(req.Cpu().MilliValue()), float64(req.Memory().Value())
}

// share is the requested fraction of allocatable CPU and memory (0 for a
// resource the node does not report).
func (l *load) share() (cpu, mem float64) {
	if l.allocCPU > 0 {
		cpu = l.cpu / l.allocCPU
	}
	if l.allocMem > 0 {
		mem = l.mem / l.allocMem
	}
	return cpu, mem
}

// average is the cluster's size-weighted requested share of each resource.
type average struct{ cpu, mem float64 }

// clusterAverage is the sum of requests over the sum of allocatable: each
// node weighs as much as its size.
func clusterAverage(loads []*load) average {
	var cpu, mem, allocCPU, allocMem float64
	for _, l := range loads {
		cpu, mem, allocCPU, allocMem = cpu+l.cpu, mem+l.mem, allocCPU+l.allocCPU, allocMem+l.allocMem
	}
	var a average
	if allocCPU > 0 {
		a.cpu = cpu / allocCPU
	}
	if allocMem > 0 {
		a.mem = mem / allocMem
	}
	return a
}

// scores are the node's CPU and memory scores: the average minus its share,
// positive when the node is less loaded than the cluster.
func (l *load) scores(a average) (cpu, mem float64) {
	c, m := l.share()
	return a.cpu - c, a.mem - m
}

// slack is the sum of the two scores: how far below the average the node
// is overall.
func (l *load) slack(a average) float64 {
	c, m := l.scores(a)
	return c + m
}

// score is the worse of the two scores.
func (l *load) score(a average) float64 { return min(l.scores(a)) }

// highLoadQueue returns the nodes whose score is below -tol, those whose
// CPU share is above high first, then worst score first.
func highLoadQueue(loads []*load, a average, tol, high float64) []*load {
	var q []*load
	for _, l := range loads {
		if l.score(a) < -tol {
			q = append(q, l)
		}
	}
	over := func(l *load) int {
		if c, _ := l.share(); c > high {
			return 0
		}
		return 1
	}
	slices.SortFunc(q, func(x, y *load) int {
		return cmp.Or(cmp.Compare(over(x), over(y)), cmp.Compare(x.score(a), y.score(a)), strings.Compare(x.node.Name, y.node.Name))
	})
	return q
}

// movable reports whether the source's rules allow moving the pod at all:
// not restartPolicy Never (its work would be lost), no local storage (its
// state lives on the node), and some request (else moving it changes no
// score).
func movable(p *v1.Pod) bool {
	if p.Spec.RestartPolicy == v1.RestartPolicyNever || utils.IsPodWithLocalStorage(p) || p.DeletionTimestamp != nil {
		return false
	}
	c, m := requests(p)
	return c > 0 || m > 0
}

// evictionOrder sorts the candidates of one node: OnFailure before Always,
// Burstable before Guaranteed (BestEffort pods request nothing and are not
// candidates), then the larger CPU request first, then by name.
func evictionOrder(a, b *v1.Pod) int {
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
	ac, _ := requests(a)
	bc, _ := requests(b)
	return cmp.Or(cmp.Compare(restart(a), restart(b)), cmp.Compare(qos(a), qos(b)), cmp.Compare(bc, ac),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// helps reports whether moving p off l lowers a share that is over the
// line.
func (l *load) helps(p *v1.Pod, a average, tol float64) bool {
	c, m := requests(p)
	sc, sm := l.scores(a)
	return (sc < -tol && c > 0) || (sm < -tol && m > 0)
}

// takes reports whether t stays at or below the average with p added.
func (l *load) takes(p *v1.Pod, a average) bool {
	c, m := requests(p)
	nc, nm := l.cpu+c, l.mem+m
	return (l.allocCPU == 0 || nc/l.allocCPU <= a.cpu) && (l.allocMem == 0 || nm/l.allocMem <= a.mem)
}

// move shifts p's requests from l to t, as planned before the scheduler
// places its replacement.
func (l *load) move(p *v1.Pod, t *load) {
	c, m := requests(p)
	l.cpu, l.mem = l.cpu-c, l.mem-m
	t.cpu, t.mem = t.cpu+c, t.mem+m
	if o := owner(p); o != "" {
		l.owners[o]--
		t.owners[o]++
	}
}

// spreadAllows reports whether the scheduler's topology spreading would
// not send p's replacement back to l rather than to t: the scheduler's
// default spreads the pods of one owner over hostnames, scoring a node
// higher the fewer of them it runs, so t must run no more of p's siblings
// than l will once p is gone. Without it a move that evens out requests
// but not counts is undone by the scheduler, cycle after cycle. A pod
// without a controlling owner has no siblings to spread.
func (l *load) spreadAllows(p *v1.Pod, t *load) bool {
	o := owner(p)
	return o == "" || t.owners[o] <= l.owners[o]-1
}

// owner is the UID of p's controlling owner, "" for none.
func owner(p *v1.Pod) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}
