package mutate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Emulators is what the webhook needs to know of the nodes' QEMU handlers
// (inventory.Emulators answers it): how many nodes that emulate q record
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

// emulatorSetting chooses the QEMU_CPU for a pod that emulates req: the
// value the most nodes emulating one of req's alternatives record (the
// smaller value on a tie). Nil when the pod emulates nothing.
func (p *PodMutator) emulatorSetting(req *isa.Request) *contract.EmulatorSetting {
	if req == nil {
		return nil
	}
	if p.opts.Emulators == nil {
		return &contract.EmulatorSetting{Reason: EmulatorOff}
	}
	counts := map[string]int{}
	arches := map[isa.Arch]bool{}
	for _, q := range req.Alternatives {
		for v, n := range p.opts.Emulators.QEMUCPUs(q) {
			counts[v] += n
			arches[q.Arch] = true
		}
	}
	if len(counts) == 0 {
		s := &contract.EmulatorSetting{Reason: EmulatorNoNode}
		if len(req.Alternatives) > 0 {
			if best, ok := p.opts.Emulators.Best(req.Alternatives[0].Arch); ok {
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

// applyEmulator sets s.QEMUCPU in every container and init container of
// pod that does not set QEMU_CPU itself, and records which. A container
// whose QEMU_CPU already is s.QEMUCPU counts as set: admitting a pod again
// changes nothing.
func applyEmulator(pod *podFields, s *contract.EmulatorSetting) {
	if s == nil || s.QEMUCPU == "" {
		return
	}
	for _, list := range []*[]containerImage{&pod.Spec.InitContainers, &pod.Spec.Containers} {
		for k := range *list {
			c := &(*list)[k]
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == isa.QEMUCPUEnv })
			switch {
			case i < 0:
				c.Env = append(c.Env, corev1.EnvVar{Name: isa.QEMUCPUEnv, Value: s.QEMUCPU})
			case c.Env[i].Value != s.QEMUCPU || c.Env[i].ValueFrom != nil:
				s.Own = append(s.Own, c.Name)
				continue
			}
			// Set now, or by an earlier admission of the same pod (a
			// reinvocation): the same setting either way.
			s.Set = append(s.Set, c.Name)
		}
	}
	if len(s.Set) == 0 {
		s.QEMUCPU, s.Reason = "", EmulatorOwn
	}
}

// emulatorClause is the decision line's clause for s.
func emulatorClause(s contract.EmulatorSetting) string {
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

// recordEmulator applies d's emulator setting to pod's containers and adds
// it to the decision: its clause to the line, itself to the counts.
func recordEmulator(pod *podFields, d *Decision) {
	if d.Emulator == nil {
		return
	}
	applyEmulator(pod, d.Emulator)
	d.Summary += "; " + emulatorClause(*d.Emulator)
	d.Counts.Emulator = d.Emulator
}

// keepEmulator carries the emulator setting admission recorded on pod into
// the decision the gate controller writes at its release: the containers'
// environment cannot change after admission, so neither does the setting.
func keepEmulator(pod *corev1.Pod, d *Decision) {
	prev, err := contract.ParseDecision(pod.Annotations)
	if err != nil || prev.Emulator == nil {
		return
	}
	d.Counts.Emulator = prev.Emulator
	d.Summary += "; " + emulatorClause(*prev.Emulator)
}
