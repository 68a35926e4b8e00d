package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Emulators is what the webhook needs to know of the nodes' QEMU handlers
// (pkg/inventory's Emulators answers it): how many nodes that emulate q record
// each QEMU_CPU value ("" for nodes whose default CPU runs what they are
// labelled with), and what an emulating node of an architecture runs at
// most.
type Emulators interface {
	QEMUCPUs(q isa.ISA) map[string]int
	Best(arch isa.Arch) (isa.ISA, bool)
}

// Reasons an emulated pod got no QEMU_CPU from isamatch
// (contract.EmulatorSetting.Reason).
const (
	// EmulatorOff: the webhook runs with --qemu-cpu=off.
	EmulatorOff = "off"
	// EmulatorDefault: the nodes that emulate the request run it with
	// their default CPU.
	EmulatorDefault = "defaultCPU"
	// EmulatorNoNode: no node emulates the request now.
	EmulatorNoNode = "noNode"
	// EmulatorSeveralArchitectures: the request's alternatives emulate
	// more than one architecture, and QEMU_CPU names one CPU.
	EmulatorSeveralArchitectures = "severalArchitectures"
	// EmulatorOwn: every container sets QEMU_CPU itself.
	EmulatorOwn = "own"
)

// ChooseEmulator chooses the QEMU_CPU for a pod that emulates req: the
// value the most nodes emulating one of req's alternatives record (the
// smaller value on a tie), so that the emulator runs what those nodes are
// labelled with. Nil when the pod emulates nothing; a setting with
// Reason EmulatorOff when emulators is nil.
func ChooseEmulator(emulators Emulators, req *isa.Request) *contract.EmulatorSetting {
	if req == nil {
		return nil
	}
	if emulators == nil {
		return &contract.EmulatorSetting{Reason: EmulatorOff}
	}
	counts := map[string]int{}
	arches := map[isa.Arch]bool{}
	for _, q := range req.Alternatives {
		for v, n := range emulators.QEMUCPUs(q) {
			counts[v] += n
			arches[q.Arch] = true
		}
	}
	if len(counts) == 0 {
		s := &contract.EmulatorSetting{Reason: EmulatorNoNode}
		if len(req.Alternatives) > 0 {
			if best, ok := emulators.Best(req.Alternatives[0].Arch); ok {
				s.Best = best.Compact()
			}
		}
		return s
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	best := mostRecorded(counts)
	switch {
	case len(arches) > 1:
		return &contract.EmulatorSetting{Reason: EmulatorSeveralArchitectures, Others: total}
	case best == "":
		return &contract.EmulatorSetting{Reason: EmulatorDefault, Nodes: counts[""], Others: total - counts[""]}
	}
	return &contract.EmulatorSetting{QEMUCPU: best, Nodes: counts[best], Others: total - counts[best]}
}

// mostRecorded is the value of counts with the highest count; on a tie a
// value beats none ("") and the smaller value wins, so every replica of the
// webhook chooses the same.
func mostRecorded(counts map[string]int) string {
	vals := slices.Sorted(maps.Keys(counts))
	best := vals[0]
	for _, v := range vals[1:] {
		if counts[v] > counts[best] || (counts[v] == counts[best] && best == "") {
			best = v
		}
	}
	return best
}

// EmulatorClause is the decision line's clause for s: what the pod's
// containers got and why, for its readable record and Events.
func EmulatorClause(s contract.EmulatorSetting) string {
	var b strings.Builder
	b.WriteString("emulator: ")
	switch {
	case s.QEMUCPU != "":
		fmt.Fprintf(&b, "%s=%s set in %s (recorded by %d of %d emulating nodes)", isa.QEMUCPUEnv, s.QEMUCPU,
			strings.Join(s.Set, ","), s.Nodes, s.Nodes+s.Others)
	case s.Reason == EmulatorOff:
		b.WriteString(isa.QEMUCPUEnv + " not set (--qemu-cpu=off): the emulator runs its default CPU")
	case s.Reason == EmulatorDefault:
		b.WriteString("default CPU (the " + strconv.Itoa(s.Nodes) + " emulating nodes record no " + isa.QEMUCPUEnv + ")")
	case s.Reason == EmulatorSeveralArchitectures:
		b.WriteString(isa.QEMUCPUEnv + " not set: the request emulates more than one architecture")
	case s.Reason == EmulatorOwn:
		b.WriteString("every container sets its own " + isa.QEMUCPUEnv)
	case s.Reason == EmulatorNoNode && s.Best != "":
		b.WriteString("no node emulates the request; emulating nodes run at most " + s.Best)
	case s.Reason == EmulatorNoNode:
		b.WriteString("no node emulates the request's architecture")
	}
	if len(s.Own) > 0 && s.Reason != EmulatorOwn {
		b.WriteString("; " + strings.Join(s.Own, ",") + " set their own")
	}
	return b.String()
}
