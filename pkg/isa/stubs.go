package isa

// TEMPORARY: signatures of the contract; the isa helper replaces every body
// and deletes this file.

import "errors"

var errTODO = errors.New("isa: not implemented yet")

// Parse parses one alternative as a user types it (strict): RISC-V ISA strings
// and profiles ("rv64gc", "RV64IMFDV", "rva23u64_zvbc"), x86-64 levels with
// optional +features ("x86-64-v3", "x86-64-v2+avx512vnni", "amd64"), arm64 with
// optional +features ("arm64+sve2", "aarch64"). Errors name the bad token.
func Parse(s string) (ISA, error) { return ISA{}, errTODO }

// ParseRequest parses "alt | alt | ..." (whitespace around '|' allowed).
func ParseRequest(s string) (Request, error) { return Request{}, errTODO }

// ParseRISCV parses a RISC-V ISA string with LLVM RISCVISAInfo::parseArchString
// semantics (lower case only), applying implications.
func ParseRISCV(s string) (ISA, error) { return ISA{}, errTODO }

// ParseCPUInfoRISCV parses a /proc/cpuinfo "isa"/"hart isa" value tolerantly.
func ParseCPUInfoRISCV(line string, h Hints) (ISA, error) { return ISA{}, errTODO }

// ParseGCCMarch parses the -march value GCC prints (-Q --help=target, -v
// --with-arch=, verbose-asm headers), tolerating GCC-only spellings.
func ParseGCCMarch(s string) (ISA, error) { return ISA{}, errTODO }

// ParseX86Flags builds an amd64 ISA from /proc/cpuinfo "flags" tokens.
func ParseX86Flags(flags []string) ISA { return ISA{} }

// ParseARM64Features builds an arm64 ISA from /proc/cpuinfo "Features" tokens.
func ParseARM64Features(features []string) ISA { return ISA{} }

// FromPlatform maps an OCI platform to the ISA it requires
// (linux/riscv64/rva23u64 -> RVA23U64, linux/amd64/v3 -> x86-64-v3, ...).
func FromPlatform(os, arch, variant string) (ISA, error) { return ISA{}, errTODO }

// Satisfies reports whether node can run what req needs: same Arch and
// req.Exts ⊆ node.Exts. No allocation.
func Satisfies(node, req ISA) bool { return false }

// SatisfiesAny returns the index of the first alternative of r node satisfies.
func SatisfiesAny(node ISA, r Request) (int, bool) { return -1, false }

// Missing lists, in canonical order, the extensions req needs and node lacks
// (or the architecture, as "arch:<name>", when they differ).
func Missing(node, req ISA) []string { return nil }

// Affinity is the paper's instruction affinity |req| / |node| over the closed
// extension sets; 0 when node does not satisfy req.
func Affinity(node, req ISA) float64 { return 0 }

// Intersect returns what both a and b have (all harts of a node); Union what
// either has (cross compiler plus binfmt emulation). Both need equal Arch.
func Intersect(a, b ISA) (ISA, error) { return ISA{}, errTODO }
func Union(a, b ISA) (ISA, error)     { return ISA{}, errTODO }

// String is the canonical form: RISC-V as LLVM's toString prints it (with
// versions), x86-64 as "x86-64-vN+extra+features", arm64 as "arm64+f1+f2...".
func (i ISA) String() string { return "" }

// Short is the unversioned readable form ("rv64imafdc_zicsr_zifencei...").
func (i ISA) Short() string { return "" }

// Extensions lists the closed extension set in canonical order.
func (i ISA) Extensions() []string { return nil }

// Len is the number of extensions (the paper's "modules").
func (i ISA) Len() int { return 0 }

// Has reports whether the named extension/feature is in the set.
func (i ISA) Has(ext string) bool { return false }

// NodeLabels returns the labels (all under NativePrefix / EmuPrefix) for a
// node with the given native ISA and emulation/cross capabilities.
func NodeLabels(native ISA, emulated []ISA) map[string]string { return nil }

// NodeFromLabels reconstructs the native and emulated ISAs from a node's
// labels (the webhook's inventory); ok is false when the node has none.
func NodeFromLabels(labels map[string]string) (native ISA, emulated []ISA, ok bool) {
	return ISA{}, nil, false
}

// Requirements returns node-selector requirements (ANDed) that hold exactly
// on nodes whose labels say they satisfy req natively (emulated=false) or
// under emulation/cross-compilation (emulated=true).
func Requirements(req ISA, emulated bool) []Requirement { return nil }

// GroupID is a short stable id of a native ISA, used as the value of the
// group label so preferred terms can name an ISA group.
func GroupID(native ISA) string { return "" }

// IsOwnedLabel reports whether key is under one of isamatch's prefixes.
func IsOwnedLabel(key string) bool { return false }
