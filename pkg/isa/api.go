package isa

// This file is the contract the rest of isamatch codes against. The bodies
// live in the other files of the package.

// Arch is a Kubernetes/OCI architecture name (GOARCH spelling).
type Arch string

// The architectures isamatch understands.
const (
	RISCV64 Arch = "riscv64"
	RISCV32 Arch = "riscv32"
	AMD64   Arch = "amd64"
	ARM64   Arch = "arm64"
)

// ExtSet is a fixed-size bitset of extensions/features. Bit i means the i-th
// entry of the extension table of the ISA's architecture family (RISC-V,
// x86-64 or arm64). Comparing two sets never allocates.
type ExtSet [8]uint64

// ISA is one normalised instruction set: an architecture plus the closed set
// of extensions (after implications). The zero value is invalid.
type ISA struct {
	Arch Arch
	Exts ExtSet
	// Unknown holds tokens a tolerant (node-side) parser kept but could not
	// map to a known extension (vendor words such as "ime"). They never take
	// part in matching; they are recorded for humans.
	Unknown []string
}

// Request is what a pod asks for: one or more alternatives, any one of which
// suffices ("rv64gcv | x86-64-v3 | arm64+sve").
type Request struct {
	Alternatives []ISA
}

// Hints carries what a node probe knows beyond the ISA string itself.
type Hints struct {
	// MVendorID, MArchID and UArch come from /proc/cpuinfo. They let the
	// parser recognise T-Head cores whose kernels print the pre-ratification
	// vector 0.7.1 as a bare "v".
	MVendorID string
	MArchID   string
	UArch     string
	// VectorVersion is the "cpu-vector" line some vendor kernels print
	// (for example "0.7.1").
	VectorVersion string
}

// Requirement is one node-selector requirement over isamatch labels. Operator
// is one of the Kubernetes NodeSelectorOperator spellings: "In", "NotIn",
// "Exists", "DoesNotExist", "Gt", "Lt".
type Requirement struct {
	Key      string
	Operator string
	Values   []string
}

// Label prefixes. Native capabilities live under NativePrefix, emulation and
// cross-compilation capabilities (the paper's QEMU label) under EmuPrefix.
const (
	NativePrefix = "isa.isamatch.io/"
	EmuPrefix    = "qemu.isamatch.io/"
)
