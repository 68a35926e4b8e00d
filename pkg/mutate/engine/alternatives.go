package engine

import (
	"github.com/isamatch/isamatch/pkg/isa"
)

// The alternative algebra. A requirement on a node is an OR-list of
// alternatives ([]alt); "a AND b" of two lists is their pairwise both,
// minimised.

// alt is one alternative the node must satisfy natively.
type alt struct {
	isa isa.ISA
	// plain: only the architecture is required; expressed with the
	// kubelet's kubernetes.io/arch label so unlabelled nodes qualify. isa
	// then has no extensions.
	plain bool
}

// emuAlt is one alternative of the emulation path: the node emulates q and
// runs the images natively (native.isa.Arch == "" when no image
// constrains), or, with exec, runs images built for q's architecture
// through its QEMU handler (isa.EmuExecLabel).
type emuAlt struct {
	q      isa.ISA
	native alt
	exec   bool
}

// plainISA is what a plain-architecture alternative is ranked with: the
// architecture's base ISA, so that, as in the paper's affinity, the node with
// the fewest extensions fits a base-ISA task best.
func (m *Matcher) plainISA(a isa.Arch) isa.ISA {
	if b, ok := m.base[a]; ok {
		return b
	}
	return isa.ISA{Arch: a}
}

// imageAlts turns an image's platforms into alternatives; unsupported lists
// the platforms isamatch has no model for.
func (m *Matcher) imageAlts(img ImageInfo, useLabel bool) (alts []alt, unsupported []string, labelErr error, inferred int) {
	for k, p := range img.Platforms {
		var a alt
		if _, ok := m.baseline[isa.Arch(p.Architecture)]; ok && p.OS == "linux" && p.Variant == "" {
			// Most platforms: the architecture alone, from NewMatcher's table.
			a = alt{isa: m.plainISA(isa.Arch(p.Architecture)), plain: true}
		} else {
			i, err := isa.FromPlatform(p.OS, p.Architecture, p.Variant)
			if err != nil {
				unsupported = append(unsupported, platformString(p))
				continue
			}
			a = alt{isa: i}
			if base, ok := m.baseline[i.Arch]; ok && base == i.Exts {
				a = alt{isa: m.plainISA(i.Arch), plain: true}
			}
		}
		if in := inferredAt(img, k); useLabel && in != nil && in.ISA.Arch == a.isa.Arch {
			// What the entrypoint binary needs, for a platform that says
			// nothing itself (see infer).
			a = alt{isa: in.ISA}
			if base, ok := m.baseline[in.ISA.Arch]; ok && base == in.ISA.Exts {
				a = alt{isa: m.plainISA(in.ISA.Arch), plain: true}
			}
			alts = append(alts, a)
			inferred++
			continue
		}
		if !useLabel || p.ISARequest == "" {
			alts = append(alts, a)
			continue
		}
		r, err := isa.ParseRequest(p.ISARequest)
		if err != nil {
			labelErr = err
			alts = append(alts, a)
			continue
		}
		found := false
		for _, ra := range r.Alternatives {
			if u, ok := both(a, alt{isa: ra}); ok {
				alts = append(alts, u)
				found = true
			}
		}
		if !found {
			alts = append(alts, a)
		}
	}
	return minimize(alts), unsupported, labelErr, inferred
}

// inferredAt is what platform k of img needs by its binary, or nil.
func inferredAt(img ImageInfo, k int) *Inferred {
	if k < len(img.Inferred) {
		return img.Inferred[k]
	}
	return nil
}

// both is the alternative that needs what a needs and what b needs (the
// extensions of both); ok is false across architectures, where no node can
// satisfy both.
func both(a, b alt) (alt, bool) {
	if a.isa.Arch != b.isa.Arch {
		return alt{}, false
	}
	if a.plain {
		return b, true
	}
	if b.plain {
		return a, true
	}
	u, err := isa.Union(a.isa, b.isa)
	if err != nil {
		return alt{}, false
	}
	u.Unknown = nil
	return alt{isa: u}, true
}

// combine is "a AND b" over two OR-lists.
func combine(a, b []alt) []alt {
	var out []alt
	for _, x := range a {
		for _, y := range b {
			if u, ok := both(x, y); ok {
				out = append(out, u)
			}
		}
	}
	return minimize(out)
}

// wider reports whether a admits every node b admits (so b is redundant
// next to a in an OR).
func wider(a, b alt) bool {
	if a.isa.Arch != b.isa.Arch || (b.plain && !a.plain) {
		return false
	}
	if a.plain {
		return true
	}
	return isa.Satisfies(b.isa, a.isa)
}

// minimize drops alternatives another one already covers, keeping order.
func minimize(alts []alt) []alt {
	if len(alts) < 2 {
		return alts
	}
	out := alts[:0:0]
	for j, b := range alts {
		redundant := false
		for i, a := range alts {
			if i != j && wider(a, b) && (!wider(b, a) || i < j) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, b)
		}
	}
	return out
}

func requestAlts(r *isa.Request) []alt {
	alts := make([]alt, 0, len(r.Alternatives))
	for _, a := range r.Alternatives {
		a.Unknown = nil
		alts = append(alts, alt{isa: a})
	}
	return minimize(alts)
}
