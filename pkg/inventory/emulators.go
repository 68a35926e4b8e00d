package inventory

import (
	"sync"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Emulators indexes what the labeler records about nodes' QEMU handlers:
// per node and emulated architecture, what the handler runs (the qemu.
// labels) and the QEMU_CPU value it runs that under (the node annotation
// isa.QEMUCPUAnnotation). The webhook asks it which QEMU_CPU to set in a
// pod it routes to emulation. The zero value is not usable; use
// [NewEmulators] (package pkg/inventory/informer feeds one from a
// manager's Node informer).
type Emulators struct {
	mu    sync.RWMutex
	nodes map[string][]emulator
}

// emulator is one node's handler for one architecture.
type emulator struct {
	runs    isa.ISA
	qemuCPU string
}

// NewEmulators returns an empty index; Set and Delete feed it.
func NewEmulators() *Emulators { return &Emulators{nodes: map[string][]emulator{}} }

// MaxQEMUCPU bounds a recorded QEMU_CPU value; a longer one, or one with
// other characters than QEMU's -cpu syntax uses (letters, digits and
// ",=._+-"), is not used: it would be copied into pods.
const MaxQEMUCPU = 512

// ValidQEMUCPU reports whether v may be set as QEMU_CPU.
func ValidQEMUCPU(v string) bool {
	if v == "" || len(v) > MaxQEMUCPU {
		return false
	}
	for _, r := range v {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ',' || r == '=' || r == '.' || r == '_' || r == '+' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// Set records a node's labels and annotations (add or update). Only the
// architectures the node executes through QEMU (isa.EmuExecLabel) count:
// what a cross compiler alone gives runs no QEMU.
func (e *Emulators) Set(name string, labels, annotations map[string]string) {
	_, emulated, _ := isa.NodeFromLabels(labels)
	var ems []emulator
	for _, em := range emulated {
		if labels[isa.EmuExecLabel(em.Arch)] != "true" {
			continue
		}
		v := annotations[isa.QEMUCPUAnnotation(em.Arch)]
		if !ValidQEMUCPU(v) {
			v = ""
		}
		ems = append(ems, emulator{runs: em, qemuCPU: v})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(ems) == 0 {
		delete(e.nodes, name)
		return
	}
	e.nodes[name] = ems
}

// Delete forgets a node.
func (e *Emulators) Delete(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.nodes, name)
}

// QEMUCPUs counts, over the nodes that emulate q, the QEMU_CPU values they
// record for q's architecture ("" for nodes whose default CPU runs what
// they are labelled with).
func (e *Emulators) QEMUCPUs(q isa.ISA) map[string]int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := map[string]int{}
	for _, ems := range e.nodes {
		for _, em := range ems {
			if em.runs.Arch == q.Arch && isa.Satisfies(em.runs, q) {
				out[em.qemuCPU]++
			}
		}
	}
	return out
}

// Best is what an emulating node of arch runs at most: the emulated ISA
// that runs the most extensions among the nodes (ok is false when no node
// emulates arch). It lets a decision say what emulation can do when a
// request asks more.
func (e *Emulators) Best(arch isa.Arch) (best isa.ISA, ok bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, ems := range e.nodes {
		for _, em := range ems {
			if em.runs.Arch == arch && (!ok || em.runs.Len() > best.Len()) {
				best, ok = em.runs, true
			}
		}
	}
	return best, ok
}
