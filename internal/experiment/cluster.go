package experiment

import (
	"sort"
	"strings"
)

// NodeSpec describes one simulated node of an experiment cluster.
type NodeSpec struct {
	Name string
	// Fixture names the host root under pkg/probe/testdata that the labeler
	// probes for this node.
	Fixture string
	// Arch is the kubelet's kubernetes.io/arch label.
	Arch string
	// MilliCPU and MemMi are the node's allocatable CPU and memory.
	MilliCPU int64
	MemMi    int64
	// Modules are the paper's RISC-V modules the node runs natively ("IMFD");
	// empty for non-RISC-V nodes. QEMU are the modules it can cross-compile
	// and emulate (the paper's QEMU column).
	Modules string
	QEMU    string
}

// PaperCluster is the paper's Table 1: an x86-64 master that can
// cross-compile RV64IMFDV, an arm64 worker and three riscv64 workers.
func PaperCluster() []NodeSpec {
	const cpu, mem = 8000, 32 * 1024
	return []NodeSpec{
		{Name: "node1", Fixture: "paper-node1", Arch: "amd64", MilliCPU: cpu, MemMi: mem, QEMU: "IMFDV"},
		{Name: "node2", Fixture: "paper-node2", Arch: "arm64", MilliCPU: cpu, MemMi: mem},
		{Name: "node3", Fixture: "paper-node3", Arch: "riscv64", MilliCPU: cpu, MemMi: mem, Modules: "IMFD"},
		{Name: "node4", Fixture: "paper-node4", Arch: "riscv64", MilliCPU: cpu, MemMi: mem, Modules: "IMFV"},
		{Name: "node5", Fixture: "paper-node5", Arch: "riscv64", MilliCPU: cpu, MemMi: mem, Modules: "IMFDV"},
	}
}

// modules is a set of single-letter RISC-V modules, closed under the
// implications the paper's letters have in the ratified specification: V
// needs D (through Zve64d) and D needs F. "I" is always present.
type modules map[byte]bool

// parseModules reads "RV64IMFD", "rv64imfd" or "IMFD".
func parseModules(s string) modules {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "RV64"), "RV32")
	m := modules{'I': true}
	for i := 0; i < len(s); i++ {
		m[s[i]] = true
	}
	if m['V'] {
		m['D'] = true
	}
	if m['D'] {
		m['F'] = true
	}
	return m
}

func (m modules) subsetOf(n modules) bool {
	for k := range m {
		if !n[k] {
			return false
		}
	}
	return true
}

func (m modules) String() string {
	var b []byte
	for k := range m {
		b = append(b, k)
	}
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return string(b)
}
