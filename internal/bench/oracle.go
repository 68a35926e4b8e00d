package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/pkg/isa"
)

// fitCount is what the oracle found of a load's pods: how many were
// checked, on a node that can run them, and on a best-fit node.
type fitCount struct {
	correct, bestFit int
	eligible, pods   int
}

// fitJudge checks load pods with the oracle (internal/oracle, which shares
// no code with pkg/isa) against the nodes' native ISAs.
type fitJudge struct {
	nodes map[string]oracle.ISA
	best  map[string]float64 // need -> the highest affinity any node offers it
}

func newFitJudge(native map[string]isa.ISA) (*fitJudge, error) {
	j := &fitJudge{nodes: make(map[string]oracle.ISA, len(native)), best: map[string]float64{}}
	for name, n := range native {
		o, err := oracle.Parse(n.String())
		if err != nil {
			return nil, fmt.Errorf("oracle: node %s: %w", name, err)
		}
		j.nodes[name] = o
	}
	return j, nil
}

func (j *fitJudge) bestOf(need oracle.ISA) float64 {
	k := need.String()
	if b, ok := j.best[k]; ok {
		return b
	}
	b := 0.0
	for _, n := range j.nodes {
		if oracle.Satisfies(n, need) {
			b = max(b, oracle.Affinity(n, need))
		}
	}
	j.best[k] = b
	return b
}

// add counts p in v: whether its node can run what it asks, and whether
// the node is a best fit, the highest affinity any node of the cluster
// offers it (per architecture for a pod that asks only for one). An
// unbound pod counts as wrong.
func (j *fitJudge) add(p *corev1.Pod, v *fitCount) error {
	v.pods++
	node, ok := j.nodes[p.Spec.NodeName]
	if !ok {
		return nil
	}
	needs, err := podNeeds(p.Annotations[isa.BareRequestAnnotation], node.Arch)
	if err != nil {
		return err
	}
	fit, ok := 0.0, false
	for _, need := range needs {
		if oracle.Satisfies(node, need) {
			ok, fit = true, max(fit, oracle.Affinity(node, need)/j.bestOf(need))
		}
	}
	if ok {
		v.correct++
		v.eligible++
		if fit >= 1-1e-9 {
			v.bestFit++
		}
	}
	return nil
}

func (v *fitCount) add(o fitCount) {
	v.correct, v.bestFit = v.correct+o.correct, v.bestFit+o.bestFit
	v.eligible, v.pods = v.eligible+o.eligible, v.pods+o.pods
}

// judge checks every pod of ns with the oracle.
func judge(ctx context.Context, e *Env, ns string, native map[string]isa.ISA, v *fitCount) error {
	j, err := newFitJudge(native)
	if err != nil {
		return err
	}
	return eachPod(ctx, e.Clientset, ns, func(p *corev1.Pod) error { return j.add(p, v) })
}

// eachPod calls fn with every pod of ns, listed in pages.
func eachPod(ctx context.Context, cs kubernetes.Interface, ns string, fn func(*corev1.Pod) error) error {
	cont := ""
	for {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 5000, Continue: cont})
		if err != nil {
			return fmt.Errorf("list pods of %s: %w", ns, err)
		}
		for i := range list.Items {
			if err := fn(&list.Items[i]); err != nil {
				return err
			}
		}
		if cont = list.Continue; cont == "" {
			return nil
		}
	}
}

// podNeeds is what a load pod asks: its request's alternatives or, with
// none, the base ISA of the node's architecture (its image runs on every
// architecture of the cluster, and the best fit is the leanest node of
// each).
func podNeeds(request, arch string) ([]oracle.ISA, error) {
	if request != "" {
		return oracle.ParseRequest(request)
	}
	base := map[string]string{oracle.AMD64: "x86-64", oracle.ARM64: "arm64", oracle.RISCV64: "rv64i"}[arch]
	i, err := oracle.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("oracle: base ISA of %s: %w", arch, err)
	}
	return []oracle.ISA{i}, nil
}

// siblingSpread is how one set of siblings (pods whose spread constraint
// over a best-fit group selects the same labels) lies over the domains of
// the constraint's key (the group's nodes): the fewest and the most
// siblings in one domain.
type siblingSpread struct {
	selector string
	domains  int
	lo, hi   int
}

func (s siblingSpread) String() string {
	return fmt.Sprintf("%s %d..%d over %d nodes", s.selector, s.lo, s.hi, s.domains)
}

// spreadSkew measures isamatch's spreading among pods, as the scheduler
// counts it: for each set of siblings, the most in one domain less the
// fewest in another (skew, the largest over the sets) and each set's
// spread, ordered by selector. nodes are every node's labels; pods without
// such a constraint are not counted.
func spreadSkew(pods []*corev1.Pod, nodes map[string]map[string]string) (skew int, spreads []siblingSpread) {
	type set struct{ key, selector string }
	counts := map[set]map[string]int{} // set -> domain -> siblings
	for _, p := range pods {
		for _, c := range p.Spec.TopologySpreadConstraints {
			if !isa.IsGroupDomainLabel(c.TopologyKey) || c.LabelSelector == nil {
				continue
			}
			s := set{c.TopologyKey, labels.Set(c.LabelSelector.MatchLabels).String()}
			if counts[s] == nil {
				counts[s] = map[string]int{}
			}
			if d, ok := nodes[p.Spec.NodeName][c.TopologyKey]; ok {
				counts[s][d]++
			}
		}
	}
	for s, byDomain := range counts {
		sp := siblingSpread{selector: s.selector}
		for _, l := range nodes {
			d, ok := l[s.key]
			if !ok {
				continue
			}
			n := byDomain[d]
			if sp.domains == 0 {
				sp.lo, sp.hi = n, n
			}
			sp.lo, sp.hi, sp.domains = min(sp.lo, n), max(sp.hi, n), sp.domains+1
		}
		if sp.domains > 0 {
			skew = max(skew, sp.hi-sp.lo)
			spreads = append(spreads, sp)
		}
	}
	slices.SortFunc(spreads, func(a, b siblingSpread) int { return strings.Compare(a.selector, b.selector) })
	return skew, spreads
}
