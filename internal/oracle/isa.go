package oracle

import (
	"fmt"
	"slices"
	"strings"
)

// Architectures, as Kubernetes and OCI spell them.
const (
	RISCV64 = "riscv64"
	AMD64   = "amd64"
	ARM64   = "arm64"
)

// ISA is an architecture and the closed set of extensions (RISC-V), cpuinfo
// flags (x86-64) or Features (arm64) it has or needs.
type ISA struct {
	Arch string
	Exts map[string]bool
}

func newISA(arch string, exts ...string) ISA {
	i := ISA{Arch: arch, Exts: map[string]bool{}}
	for _, e := range exts {
		i.Exts[e] = true
	}
	return i
}

// Len is the number of extensions that count for fit: those a host can
// report.
func (i ISA) Len() int {
	n := 0
	for e := range i.Exts {
		if !unreported[e] {
			n++
		}
	}
	return n
}

// String is the architecture and the sorted extensions, for messages and as
// a key.
func (i ISA) String() string {
	exts := make([]string, 0, len(i.Exts))
	for e := range i.Exts {
		exts = append(exts, e)
	}
	slices.Sort(exts)
	return i.Arch + ":" + strings.Join(exts, ",")
}

// Satisfies reports whether node can run code that needs need: the same
// architecture, and every extension of need that a host can report.
func Satisfies(node, need ISA) bool {
	if node.Arch != need.Arch {
		return false
	}
	for e := range need.Exts {
		if !unreported[e] && !node.Exts[e] {
			return false
		}
	}
	return true
}

// Affinity is the paper's instruction affinity |need| / |node| for a need
// node satisfies, counting the need's extensions the node has.
func Affinity(node, need ISA) float64 {
	if node.Len() == 0 {
		return 1
	}
	common := 0
	for e := range need.Exts {
		if !unreported[e] && node.Exts[e] {
			common++
		}
	}
	return float64(common) / float64(node.Len())
}

// Parse reads one ISA: "rv64gcv", "rva23u64_zvbc", "x86-64-v3+avx512f",
// "arm64+sve". Case and surrounding spaces are ignored.
func Parse(s string) (ISA, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(s, "rv"):
		return parseRISCV(s)
	case strings.HasPrefix(s, "x86-64"), strings.HasPrefix(s, "x86_64"), strings.HasPrefix(s, "amd64"):
		return parseX86(s)
	case strings.HasPrefix(s, "arm64"), strings.HasPrefix(s, "aarch64"):
		return parseARM64(s)
	}
	return ISA{}, fmt.Errorf("oracle cannot read ISA %q", s)
}

// ParseRequest reads alternatives joined by "|".
func ParseRequest(s string) ([]ISA, error) {
	var out []ISA
	for _, alt := range strings.Split(s, "|") {
		i, err := Parse(alt)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// FromPlatform is what an OCI platform needs: the architecture's base for
// no variant, else the variant's ISA (riscv64 profiles, amd64 v1..v4,
// arm64 v8.x/v9.x).
func FromPlatform(os, arch, variant string) (ISA, error) {
	if os != "linux" {
		return ISA{}, fmt.Errorf("oracle knows linux platforms only, not %q", os)
	}
	switch arch {
	case RISCV64:
		if variant == "" {
			return Parse("rv64i")
		}
		return Parse(variant)
	case AMD64:
		if variant == "" || variant == "v1" {
			return Parse("x86-64")
		}
		return Parse("x86-64-" + variant)
	case ARM64:
		return arm64Version(variant)
	}
	return ISA{}, fmt.Errorf("oracle does not know architecture %q", arch)
}

// Union is what needs both a and b (of one architecture): every extension
// of either.
func Union(a, b ISA) ISA {
	u := newISA(a.Arch)
	for e := range a.Exts {
		u.Exts[e] = true
	}
	for e := range b.Exts {
		u.Exts[e] = true
	}
	return u
}
