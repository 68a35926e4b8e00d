package isa

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// familyOf returns the extension table of an architecture (nil if unknown).
func familyOf(a Arch) *family {
	switch a {
	case RISCV64, RISCV32:
		return rv.family
	case AMD64:
		return x86
	case ARM64:
		return arm64
	}
	return nil
}

// observable drops, for RISC-V, the extensions no kernel reports.
func observable(i ISA) ExtSet {
	if i.Arch == RISCV64 || i.Arch == RISCV32 {
		return i.Exts.andNot(rv.unobservable)
	}
	return i.Exts
}

// Satisfies reports whether node can run what req needs: same Arch and
// req.Exts ⊆ node.Exts. RISC-V extensions listed by Unobservable are not
// required of the node. No allocation.
func Satisfies(node, req ISA) bool {
	if node.Arch != req.Arch || node.Arch == "" {
		return false
	}
	ignore := &noExts
	if req.Arch == RISCV64 || req.Arch == RISCV32 {
		ignore = &rv.unobservable
	}
	var d uint64
	for k := range req.Exts {
		d |= req.Exts[k] &^ node.Exts[k] &^ ignore[k]
	}
	return d == 0
}

var noExts ExtSet

// Missing lists, in canonical order, the extensions req needs and node lacks
// (or the architecture, as "arch:<name>", when they differ).
func Missing(node, req ISA) []string {
	if node.Arch != req.Arch {
		return []string{"arch:" + string(req.Arch)}
	}
	f := familyOf(req.Arch)
	if f == nil {
		return nil
	}
	return f.list(observable(req).andNot(node.Exts))
}

// Beyond lists, in canonical order, what node has that req does not need,
// leaving out extensions another listed one implies (rv64gcv beyond rv64gc
// is just "v"), for messages saying how loosely a node fits. It is empty
// when node has nothing more, or when the architectures differ.
func Beyond(node, req ISA) []string {
	f := familyOf(node.Arch)
	if node.Arch != req.Arch || f == nil {
		return nil
	}
	return f.list(f.minimal(observable(node).andNot(req.Exts)))
}

// Affinity is the paper's instruction affinity |req| / |node| over the closed
// extension sets; 0 when node does not satisfy req. Extensions listed by
// Unobservable are counted on neither side, so the value is in (0, 1] and is
// 1 exactly when the node has nothing the request does not need.
func Affinity(node, req ISA) float64 {
	if !Satisfies(node, req) {
		return 0
	}
	n := observable(node).count()
	if n == 0 {
		return 1
	}
	return float64(observable(req).count()) / float64(n)
}

var errArchMismatch = errors.New("architectures differ")

func combine(a, b ISA, op func(x, y ExtSet) ExtSet, unk func(x, y []string) []string) (ISA, error) {
	if a.Arch != b.Arch {
		return ISA{}, fmt.Errorf("isa: combine %s with %s: %w", a.Arch, b.Arch, errArchMismatch)
	}
	out := ISA{Arch: a.Arch, Exts: op(a.Exts, b.Exts), Unknown: unk(a.Unknown, b.Unknown)}
	switch a.Arch {
	case RISCV64, RISCV32:
		out.Exts = rvNodeClose(rvXLEN(a.Arch), out.Exts)
	default:
		if f := familyOf(a.Arch); f != nil {
			out.Exts = f.close(out.Exts)
		}
	}
	return out, nil
}

// Intersect returns what both a and b have (all harts of a node); Union what
// either has (cross compiler plus binfmt emulation). Both need equal Arch.
func Intersect(a, b ISA) (ISA, error) {
	return combine(a, b, ExtSet.and, func(x, y []string) []string {
		var out []string
		for _, u := range x {
			if slices.Contains(y, u) {
				out = append(out, u)
			}
		}
		return out
	})
}

// Union returns what either a or b has; see Intersect.
func Union(a, b ISA) (ISA, error) {
	return combine(a, b, ExtSet.or, func(x, y []string) []string {
		out := append(slices.Clone(x), y...)
		slices.Sort(out)
		return slices.Compact(out)
	})
}

// String is the canonical form: RISC-V as LLVM's toString prints it (with
// versions), x86-64 as "x86-64-vN+extra+features", arm64 as "arm64+f1+f2...".
func (i ISA) String() string {
	switch i.Arch {
	case RISCV64, RISCV32:
		return rvString(rvXLEN(i.Arch), i.Exts)
	case AMD64:
		return x86String(i.Exts)
	case ARM64:
		return arm64String(i.Exts)
	}
	return ""
}

// Short is the unversioned readable form ("rv64imafdc_zicsr_zifencei...").
// It parses back (Parse) to the same set. For amd64 and arm64 it equals
// String.
func (i ISA) Short() string {
	switch i.Arch {
	case RISCV64, RISCV32:
		return rvShort(rvXLEN(i.Arch), i.Exts)
	}
	return i.String()
}

// Extensions lists the closed extension set in canonical order.
func (i ISA) Extensions() []string {
	f := familyOf(i.Arch)
	if f == nil {
		return nil
	}
	return f.list(i.Exts)
}

// Len is the number of extensions (the paper's "modules").
func (i ISA) Len() int { return i.Exts.count() }

// XLEN is 32 or 64 for RISC-V and 64 for amd64/arm64, 0 otherwise.
func (i ISA) XLEN() int {
	switch i.Arch {
	case RISCV32:
		return 32
	case RISCV64, AMD64, ARM64:
		return 64
	}
	return 0
}

// ErrUnsupportedPlatform is returned by FromPlatform for platforms isamatch
// has no ISA model for; callers treat it as "no ISA constraint beyond the
// architecture".
var ErrUnsupportedPlatform = errors.New("unsupported platform")

// FromPlatform maps an OCI platform to the ISA it requires
// (linux/riscv64/rva23u64 -> RVA23U64, linux/amd64/v3 -> x86-64-v3, ...).
//
//	linux/riscv64 ""                 rv64imafdc_zicsr_zifencei (the rv64gc baseline distros build for)
//	linux/riscv64 rva20u64|rva22u64|rva23u64   that profile
//	linux/amd64 ""|v1|v2|v3|v4       x86-64 level
//	linux/arm64 ""|v8|v8.N|v9|v9.N   the mandatory features of that version (see arm64Versions)
//
// Anything else (os other than linux, arm, 386, ppc64le, s390x, unknown
// variants) returns an error wrapping ErrUnsupportedPlatform.
func FromPlatform(os, arch, variant string) (ISA, error) {
	unsupported := func() (ISA, error) {
		return ISA{}, fmt.Errorf("isa: platform %s/%s%s: %w", os, arch, variantSuffix(variant), ErrUnsupportedPlatform)
	}
	if os != "linux" {
		return unsupported()
	}
	v := strings.ToLower(variant)
	switch arch {
	case "riscv64":
		switch v {
		case "":
			return Parse("rv64imafdc_zicsr_zifencei")
		case "rva20u64", "rva22u64", "rva23u64":
			return Parse(v)
		}
	case "amd64":
		switch v {
		case "", "v1":
			return Parse("x86-64")
		case "v2", "v3", "v4":
			return Parse("x86-64-" + v)
		}
	case "arm64":
		v = strings.TrimPrefix(v, "v")
		if v == "" {
			v = "8"
		}
		if s, ok := arm64Versions[v]; ok {
			return ISA{Arch: ARM64, Exts: s}, nil
		}
	}
	return unsupported()
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return "/" + v
}
