package experiment

import (
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/internal/oracle"
)

// Placement is where one task's pod went ("" if it was not scheduled).
type Placement struct {
	Task Task
	Node string
}

// Result scores one run of one scenario.
type Result struct {
	Scenario string
	Isamatch bool
	Pods     int
	// Scheduled pods got a node; Correct pods are on a node that can run
	// them.
	Scheduled, Correct int
	// Eligible pods had, when they were scheduled, a node with room that
	// could run them; BestFit of those went to a highest-affinity one.
	Eligible, BestFit int
	// PerNode counts pods per node name ("" = unscheduled).
	PerNode map[string]int
	// Wrong lists the first few wrongly placed tasks, for the report.
	Wrong []string
}

// Correctness is the share of pods on a node that can run them.
func (r Result) Correctness() float64 { return ratio(r.Correct, r.Pods) }

// BestFitRate is the share of eligible pods placed on a best-fit node.
func (r Result) BestFitRate() float64 { return ratio(r.BestFit, r.Eligible) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// fit is the oracle's verdict for one task on one node: whether the node can
// run it, and how well (higher is better; the paper's instruction affinity,
// with emulation-capable nodes ranked above native ones in the QEMU flow).
// The paper's module letters ("IMFD", "RV64IMFD") are read by
// internal/oracle.
func fit(n NodeSpec, t Task, emulation bool) (ok bool, score float64) {
	need := paperISA(t.Need)
	if emulation && n.QEMU != "" {
		if q := paperISA(n.QEMU); oracle.Satisfies(q, need) {
			return true, 2 + oracle.Affinity(q, need)
		}
	}
	if n.Modules == "" {
		return false, 0
	}
	have := paperISA(n.Modules)
	if !oracle.Satisfies(have, need) {
		return false, 0
	}
	return true, oracle.Affinity(have, need)
}

// paperISA reads the paper's spelling: "RV64IMFD" or the letters "IMFD".
func paperISA(s string) oracle.ISA {
	s = strings.ToLower(strings.TrimSpace(s))
	if !strings.HasPrefix(s, "rv") {
		s = "rv64" + s
	}
	i, err := oracle.Parse(s)
	if err != nil {
		panic(fmt.Sprintf("paper ISA %q: %v", s, err))
	}
	return i
}

// Evaluate scores placements, given in the order the pods were scheduled,
// against the cluster: correctness per pod, and best fit against the nodes
// that had room at that moment (room is tracked from the placements
// themselves, which are the only pods in the cluster).
func Evaluate(nodes []NodeSpec, sc Scenario, isamatch bool, placements []Placement) Result {
	res := Result{Scenario: sc.Name, Isamatch: isamatch, Pods: len(placements), PerNode: map[string]int{}}
	usedCPU, usedMem := map[string]int64{}, map[string]int64{}
	byName := map[string]NodeSpec{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, p := range placements {
		res.PerNode[p.Node]++
		t := p.Task
		best, anyRoom := -1.0, false
		for _, n := range nodes {
			ok, s := fit(n, t, sc.Emulation)
			room := usedCPU[n.Name]+t.MilliCPU <= n.MilliCPU && usedMem[n.Name]+t.MemMi <= n.MemMi
			if ok && room {
				anyRoom = true
				best = max(best, s)
			}
		}
		if anyRoom {
			res.Eligible++
		}
		if p.Node == "" {
			continue
		}
		res.Scheduled++
		n, known := byName[p.Node]
		ok, s := fit(n, t, sc.Emulation)
		if known && ok {
			res.Correct++
			if anyRoom && s >= best-1e-9 {
				res.BestFit++
			}
		} else if len(res.Wrong) < 5 {
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s(%s)->%s", t.Name, t.Need, p.Node))
		}
		usedCPU[p.Node] += t.MilliCPU
		usedMem[p.Node] += t.MemMi
	}
	return res
}
