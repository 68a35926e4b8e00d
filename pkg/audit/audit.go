package audit

import (
	"cmp"
	"iter"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/misplace"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Reasons a pod is misplaced (Finding.Reasons, and the label of
// isamatch_misplaced_pods).
const (
	ReasonUndecided = "undecided"
	ReasonRequest   = "request"
	ReasonAffinity  = "affinity"
	ReasonRuntime   = "runtime"
)

// Reasons lists every reason, in the order a Finding lists them.
var Reasons = []string{ReasonUndecided, ReasonRequest, ReasonAffinity, ReasonRuntime}

// Finding is one misplaced pod.
type Finding struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Node      string `json:"node"`
	// NodeISA is the node's ISA for people (misplace.NodeISA).
	NodeISA string `json:"nodeISA"`
	// Reasons are the Reason* constants that hold, in Reasons' order;
	// Details says, for each, what is wrong.
	Reasons []string       `json:"reasons"`
	Details []string       `json:"details"`
	Needs   misplace.Needs `json:"needs"`
}

// Input is what Audit reads.
type Input struct {
	// Pods may be whole or cut by misplace.Slim; only the running ones
	// (bound, not finished, not being deleted) are audited. A sequence, so
	// that a cache of records builds one pod at a time.
	Pods iter.Seq[*corev1.Pod]
	// Nodes are the nodes' metadata by name; a pod whose node is not
	// there is skipped (its node is gone, the pod with it).
	Nodes map[string]*metav1.ObjectMeta
	// Inventory is the node inventory the request is decided against.
	Inventory *engine.Snapshot
	Scope     Scope
	// Matcher decides the pods' requests (a new one when nil).
	Matcher *engine.Matcher
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
}

// Audit returns the misplaced pods of in, sorted by namespace and name.
func Audit(in Input) []Finding {
	return slices.SortedFunc(Findings(in), func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Pod, b.Pod))
	})
}

// Findings yields the misplaced pods of in as in.Pods yields them, each
// judged when it is reached: a caller that only counts them (the
// webhook's audit of every scheduled pod, each minute) holds none.
func Findings(in Input) iter.Seq[Finding] {
	if in.Matcher == nil {
		in.Matcher = engine.NewMatcher()
	}
	if in.Inventory == nil {
		in.Inventory = inventory.NewStatic(nil).Snapshot()
	}
	req := requests{m: in.Matcher, snap: in.Inventory, keys: in.Keys, memo: map[string]requestRule{}}
	return func(yield func(Finding) bool) {
		for pod := range in.Pods {
			f, ok := judge(in, &req, pod)
			if ok && !yield(f) {
				return
			}
		}
	}
}

// judge returns pod's Finding, and false when the pod is not running on a
// known node or nothing is wrong with it.
func judge(in Input, req *requests, pod *corev1.Pod) (Finding, bool) {
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return Finding{}, false
	}
	meta, ok := in.Nodes[pod.Spec.NodeName]
	if !ok {
		return Finding{}, false
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: meta.Name, Labels: meta.Labels}}
	f := Finding{Namespace: pod.Namespace, Pod: pod.Name, Node: pod.Spec.NodeName}
	add := func(reason, detail string) {
		f.Reasons = append(f.Reasons, reason)
		f.Details = append(f.Details, detail)
	}
	_, decided := misplace.Decision(pod)
	if !decided && in.Scope.Handles(pod) {
		add(ReasonUndecided, "no isamatch decision: admitted while the webhook failed open or before it was installed; create it again")
	}
	if detail := req.check(pod, node); detail != "" {
		add(ReasonRequest, detail)
	}
	if decided {
		if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err == nil && !ok {
			add(ReasonAffinity, "the node no longer satisfies the pod's required node affinity: its labels changed after the pod was scheduled")
		}
	}
	for _, fl := range misplace.Detect(pod) {
		add(ReasonRuntime, "container "+fl.Container+" died of "+runtimeText(fl.Reason))
		break
	}
	if len(f.Reasons) == 0 {
		return Finding{}, false
	}
	f.NodeISA = misplace.NodeISA(meta.Labels, meta.Annotations)
	f.Needs = misplace.PodNeeds(pod, in.Keys)
	return f, true
}

func runtimeText(reason string) string {
	if reason == misplace.ReasonSIGILL {
		return "SIGILL (an instruction the node lacks)"
	}
	return "exec format error (a binary of another architecture)"
}

// Count returns how many findings hold each reason (every reason present,
// 0 when none).
func Count(fs iter.Seq[Finding]) map[string]int {
	out := make(map[string]int, len(Reasons))
	for _, r := range Reasons {
		out[r] = 0
	}
	for f := range fs {
		for _, r := range f.Reasons {
			out[r]++
		}
	}
	return out
}

// requestRule is what one request needs: a selector of the nodes that
// meet it (nil: anything), or the reason it cannot be decided.
type requestRule struct {
	sel    *nodeaffinity.LazyErrorNodeSelector
	denied string
}

// requests judges pods' own requests, each distinct request decided once.
type requests struct {
	m    *engine.Matcher
	snap *engine.Snapshot
	keys engine.KeyOptions
	memo map[string]requestRule
}

// check returns what is wrong with node for pod's request, "" when nothing
// (or the pod asks nothing).
func (r *requests) check(pod *corev1.Pod, node *corev1.Node) string {
	in, msg := engine.PodInputWith(pod.ObjectMeta, r.keys)
	if msg != "" {
		return "malformed request: " + sanitize.Line(msg, 256)
	}
	if in.Request == nil && in.QEMU == nil {
		return ""
	}
	key := in.RequestFrom + "\x00" + in.RequestText + "\x00" + in.QEMUFrom + "\x00" + in.QEMUText
	rule, ok := r.memo[key]
	if !ok {
		d := r.m.Decide(in, r.snap)
		switch {
		case d.Denied != "":
			rule.denied = sanitize.Line(d.Denied, 256)
		case len(d.Required) > 0:
			rule.sel = nodeaffinity.NewLazyErrorNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: d.Required})
		}
		r.memo[key] = rule
	}
	if rule.denied != "" {
		return "the webhook would deny the request: " + rule.denied
	}
	if rule.sel == nil {
		return ""
	}
	if ok, err := rule.sel.Match(node); err == nil && !ok {
		var what []string
		if in.Request != nil {
			what = append(what, "request "+sanitize.Line(in.RequestText, 160))
		}
		if in.QEMU != nil {
			what = append(what, "qemu "+sanitize.Line(in.QEMUText, 160))
		}
		return "the node cannot run the pod's " + strings.Join(what, ", ")
	}
	return ""
}
