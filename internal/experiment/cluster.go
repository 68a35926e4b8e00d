package experiment

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
