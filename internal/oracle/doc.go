// Package oracle is the test oracle of isamatch's experiments and
// end-to-end suites: it says, from a host root's own files, whether a node
// can run what a pod asks for and how well it fits. Its entry points are
// Parse (a request or ISA string), FromPlatform (an OCI platform), ReadHost
// (a host root) and Fit.
//
// It is deliberately independent of pkg/isa, the code under test: it has
// its own small parser and its own implication table, kept as simple as the
// suites allow, so that a bug in pkg/isa shows up as a disagreement instead
// of being copied into the verdict. Its grammar covers what the suites
// write: RISC-V ISA strings (rv32/rv64, single letters, G, multi-letter
// z*/s*/x* extensions, versions ignored), the profiles rva20u64, rva22u64
// and rva23u64, x86-64 levels with +features, arm64 with +features, the OCI
// platform variants of those architectures and alternatives joined by "|".
package oracle
