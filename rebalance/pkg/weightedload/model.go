package weightedload

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// model is one cycle's measure of load: which dimensions count and with
// what weight, the cluster's size-weighted average of each, and the lines
// a node is judged by. Shares and lines are fractions (0.1 is 10 points).
//
// The design source's load formula: a node's load L is the weighted mean
// of its shares, L = Σ w·share / Σ w (CPU%, memory%, network%, disk-IO%
// when every weight is 1), and its score is (1 - L)·10, 10 for an idle
// node and 0 for a full one.
type model struct {
	// weight is 0 for a dimension left out of this cycle.
	weight vec
	total  float64
	avg    vec
	// tol is the tolerance, hyst the extra margin a measured dimension
	// must exceed before a node is queued, high the CPU share that puts a
	// node at the head of the queue.
	tol, hyst, high float64
}

// newModel measures loads with weights: a dimension counts when its
// weight is above 0 and, for network and disk (which have no fallback),
// when every node was measured. The average of a dimension is the sum of
// the nodes' use over the sum of their capacity, so a bigger node counts
// more (the source's specification coefficient; network and disk come as
// fractions, so there each node counts the same).
func newModel(loads []*load, weights vec, tol, hyst, high float64) *model {
	m := &model{tol: tol, hyst: hyst, high: high}
	var used, capacity vec
	for i := range weights {
		w := weights[i]
		for _, l := range loads {
			if (i == netDim || i == diskDim) && l.source[i] == usage.Requests {
				w = 0
			}
			used[i] += l.used[i]
			capacity[i] += l.capacity[i]
		}
		if w <= 0 || capacity[i] <= 0 {
			continue
		}
		m.weight[i] = w
		m.total += w
		m.avg[i] = used[i] / capacity[i]
	}
	return m
}

// dims are the indexes of the dimensions that count.
func (m *model) dims() []int {
	var out []int
	for i, w := range m.weight {
		if w > 0 {
			out = append(out, i)
		}
	}
	return out
}

// load is the source's L of shares s: their weighted mean.
func (m *model) load(s vec) float64 {
	if m.total == 0 {
		return 0
	}
	var sum float64
	for _, i := range m.dims() {
		sum += m.weight[i] * s[i]
	}
	return sum / m.total
}

// shares are l's shares, with extra added to its use.
func shares(l *load, extra vec) vec {
	var s vec
	for i := range s {
		if l.capacity[i] > 0 {
			s[i] = (l.used[i] + extra[i]) / l.capacity[i]
		}
	}
	return s
}

// nodeLoad is l's load L; average is the cluster's, the same formula over
// the averages.
func (m *model) nodeLoad(l *load) float64 { return m.load(shares(l, vec{})) }
func (m *model) average() float64         { return m.load(m.avg) }

// score is the source's node score, (1 - L)·10.
func (m *model) score(l *load) float64 { return (1 - m.nodeLoad(l)) * 10 }

// over is how far l's share of dimension i is above the average.
func (m *model) over(l *load, i int) float64 { return l.share(i) - m.avg[i] }

// queued reports whether l joins the high-load queue: one of its
// dimensions is above the average by more than the tolerance, plus the
// hysteresis margin where the value is measured rather than requested
// (measured noise does not queue a node that sits near the line).
func (m *model) queued(l *load) bool {
	for _, i := range m.dims() {
		line := m.tol
		if l.source[i] != usage.Requests {
			line += m.hyst
		}
		if m.over(l, i) > line {
			return true
		}
	}
	return false
}

// settled reports whether l is back within the tolerance on every
// dimension: evictions from it stop.
func (m *model) settled(l *load) bool {
	for _, i := range m.dims() {
		if m.over(l, i) > m.tol {
			return false
		}
	}
	return true
}

// helps reports whether moving a pod that uses use off l lowers a
// dimension that is over the line.
func (m *model) helps(l *load, use vec) bool {
	for _, i := range m.dims() {
		if m.over(l, i) > m.tol && use[i] > 0 {
			return true
		}
	}
	return false
}

// takes reports whether t, with use added, stays at or below the cluster's
// load, and at or below the average in every dimension in which src is
// over the line and the pod uses something.
func (m *model) takes(t, src *load, use vec) bool {
	after := shares(t, use)
	if m.load(after) > m.average() {
		return false
	}
	for _, i := range m.dims() {
		if m.over(src, i) > m.tol && use[i] > 0 && after[i] > m.avg[i] {
			return false
		}
	}
	return true
}

// queue returns the queued nodes, those whose CPU share is above the high
// threshold first, then the highest load first, then by name.
func (m *model) queue(loads []*load) []*load {
	var q []*load
	for _, l := range loads {
		if m.queued(l) {
			q = append(q, l)
		}
	}
	hot := func(l *load) int {
		if l.share(cpuDim) > m.high {
			return 0
		}
		return 1
	}
	slices.SortFunc(q, func(x, y *load) int {
		return cmp.Or(cmp.Compare(hot(x), hot(y)), cmp.Compare(m.nodeLoad(y), m.nodeLoad(x)), strings.Compare(x.node.Name, y.node.Name))
	})
	return q
}

// balance is l's balance index, from 0 to 1: one minus the weighted root
// mean square of how far its shares are from the cluster's averages. 1 is
// a node exactly at the average in every dimension.
func (m *model) balance(l *load) float64 {
	if m.total == 0 {
		return 1
	}
	var sum float64
	for _, i := range m.dims() {
		d := l.share(i) - m.avg[i]
		sum += m.weight[i] * d * d
	}
	return max(0, 1-math.Sqrt(sum/m.total))
}
