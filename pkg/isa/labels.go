package isa

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Label keys (after NativePrefix or EmuPrefix).
const (
	keyArch     = "arch"
	keyExtCount = "ext-count"
	keyGroup    = "group"
	keyX86Level = "x86-64-level"
)

// archs in the order NodeFromLabels returns emulated ISAs.
var archs = []Arch{AMD64, ARM64, RISCV32, RISCV64}

func validArch(a Arch) bool { return slices.Contains(archs, a) }

// NodeLabels returns the labels (all under NativePrefix / EmuPrefix) for a
// node with the given native ISA and emulation/cross capabilities:
//
//	isa.isamatch.io/arch=<arch>              isa.isamatch.io/<fam>.<ext>=true
//	isa.isamatch.io/rv.<bundle>=true         (RISC-V: g, rva20u64, rva22u64, rva23u64, rvb23u64)
//	isa.isamatch.io/x86-64-level=<1..4>      (amd64 only)
//	isa.isamatch.io/ext-count=<n>            isa.isamatch.io/group=<GroupID>
//	qemu.isamatch.io/<arch>=true             qemu.isamatch.io/<fam>.<ext>=true
//	qemu.isamatch.io/ext-count.<arch>=<n>    qemu.isamatch.io/x86-64-level=<n> (amd64)
//
// <fam> is rv (riscv32 and riscv64 share it), x86 or arm64. A bundle label
// says the node has every (observable) extension of the bundle: G or a
// user-mode profile; Requirements uses them to keep affinity short. Emulated
// ISAs of
// the same architecture are merged (Union). A native ISA with an unknown or
// empty Arch gives no native labels.
func NodeLabels(native ISA, emulated []ISA) map[string]string {
	l := map[string]string{}
	if validArch(native.Arch) {
		l[NativePrefix+keyArch] = string(native.Arch)
		f := familyOf(native.Arch)
		for _, e := range f.list(native.Exts) {
			l[NativePrefix+f.key+"."+e] = "true"
		}
		for _, b := range bundlesOf(native) {
			l[NativePrefix+f.key+"."+b.name] = "true"
		}
		if native.Arch == AMD64 {
			if lvl := x86Level(native.Exts); lvl > 0 {
				l[NativePrefix+keyX86Level] = strconv.Itoa(lvl)
			}
		}
		l[NativePrefix+keyExtCount] = strconv.Itoa(native.Len())
		l[NativePrefix+keyGroup] = GroupID(native)
	}
	for _, e := range mergeEmulated(emulated) {
		f := familyOf(e.Arch)
		l[EmuPrefix+string(e.Arch)] = "true"
		for _, n := range f.list(e.Exts) {
			l[EmuPrefix+f.key+"."+n] = "true"
		}
		for _, b := range bundlesOf(e) {
			l[EmuPrefix+f.key+"."+b.name] = "true"
		}
		if e.Arch == AMD64 {
			if lvl := x86Level(e.Exts); lvl > 0 {
				l[EmuPrefix+keyX86Level] = strconv.Itoa(lvl)
			}
		}
		l[EmuPrefix+keyExtCount+"."+string(e.Arch)] = strconv.Itoa(e.Len())
	}
	return l
}

// mergeEmulated unions emulated ISAs per architecture, sorted by arch.
func mergeEmulated(emulated []ISA) []ISA {
	var out []ISA
	for _, a := range archs {
		var acc ISA
		found := false
		for _, e := range emulated {
			if e.Arch != a {
				continue
			}
			if !found {
				acc, found = e, true
				continue
			}
			acc, _ = Union(acc, e)
		}
		if found {
			acc.Unknown = nil
			out = append(out, acc)
		}
	}
	return out
}

// NodeFromLabels reconstructs the native and emulated ISAs from a node's
// labels (the webhook's inventory); ok is false when the node has no valid
// native arch label. Emulated ISAs come sorted by architecture. Unknown tokens
// are not in labels and so are not restored.
func NodeFromLabels(labels map[string]string) (native ISA, emulated []ISA, ok bool) {
	if a := Arch(labels[NativePrefix+keyArch]); validArch(a) {
		native = ISA{Arch: a, Exts: extsFromLabels(labels, NativePrefix, familyOf(a))}
		ok = true
	}
	for _, a := range archs {
		if labels[EmuPrefix+string(a)] != "true" {
			continue
		}
		emulated = append(emulated, ISA{Arch: a, Exts: extsFromLabels(labels, EmuPrefix, familyOf(a))})
	}
	return native, emulated, ok
}

// ExecutedFromLabels returns the architectures whose programs a node
// executes through QEMU (EmuExecLabel), sorted.
func ExecutedFromLabels(labels map[string]string) []Arch {
	var out []Arch
	for _, a := range archs {
		if labels[EmuExecLabel(a)] == "true" {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// ExecRequirement is the node requirement that the node executes a
// programs through QEMU.
func ExecRequirement(a Arch) Requirement {
	return Requirement{Key: EmuExecLabel(a), Operator: "In", Values: []string{"true"}}
}

func extsFromLabels(labels map[string]string, prefix string, f *family) ExtSet {
	var s ExtSet
	p := prefix + f.key + "."
	for k, v := range labels {
		if v != "true" {
			continue
		}
		if n, ok := strings.CutPrefix(k, p); ok {
			if i, ok := f.index[n]; ok {
				s.set(i)
			}
		}
	}
	return s
}

// Requirements returns node-selector requirements (ANDed) that hold exactly
// on nodes whose labels say they satisfy req natively (emulated=false) or
// under emulation/cross-compilation (emulated=true): the architecture, then
// one Exists per extension of a minimal generating set of the request
// (extensions implied by other requested ones are left out: node labels are
// closed under implication; Unobservable ones are left out too). An amd64
// level becomes "x86-64-level Gt <N-1>" and its features are not listed.
func Requirements(req ISA, emulated bool) []Requirement {
	f := familyOf(req.Arch)
	if f == nil {
		return nil
	}
	prefix := NativePrefix
	var out []Requirement
	if emulated {
		prefix = EmuPrefix
		out = append(out, Requirement{Key: EmuPrefix + string(req.Arch), Operator: "In", Values: []string{"true"}})
	} else {
		out = append(out, Requirement{Key: NativePrefix + keyArch, Operator: "In", Values: []string{string(req.Arch)}})
	}
	need := observable(req)
	if req.Arch == AMD64 {
		if lvl := x86Level(need); lvl > 0 {
			out = append(out, Requirement{Key: prefix + keyX86Level, Operator: "Gt", Values: []string{strconv.Itoa(lvl - 1)}})
			need = need.andNot(x86Levels[lvl])
		}
	}
	// Bundles first, largest cover first, while one covers at least two
	// extensions still needed (a bundle label holds exactly when the node
	// has the whole bundle, and every bundle used is part of the request).
	all := need
	for {
		var best *bundle
		cover := 1
		for k, b := range bundles {
			if b.arch == req.Arch && b.exts.subsetOf(all) {
				if n := b.exts.and(need).count(); n > cover {
					best, cover = &bundles[k], n
				}
			}
		}
		if best == nil {
			break
		}
		out = append(out, Requirement{Key: prefix + f.key + "." + best.name, Operator: "Exists"})
		need = need.andNot(best.exts)
	}
	for _, n := range f.list(f.minimal(need)) {
		out = append(out, Requirement{Key: prefix + f.key + "." + n, Operator: "Exists"})
	}
	return out
}

// bundle is a named set of extensions nodes are labelled with as a whole.
type bundle struct {
	name string
	arch Arch
	exts ExtSet // observable extensions, closed under implication
}

// bundles are G (rv32 and rv64) and the RISC-V user-mode profiles.
var bundles = func() []bundle {
	var out []bundle
	for _, s := range []string{"rv32g", "rv64g", "rva20u64", "rva22u64", "rva23u64", "rvb23u64"} {
		i, err := ParseRISCV(s)
		if err != nil {
			panic("isa: bundle " + s + ": " + err.Error())
		}
		name := strings.TrimPrefix(strings.TrimPrefix(s, "rv32"), "rv64")
		out = append(out, bundle{name: name, arch: i.Arch, exts: observable(i)})
	}
	return out
}()

// bundlesOf lists the bundles i has entirely.
func bundlesOf(i ISA) []bundle {
	var out []bundle
	for _, b := range bundles {
		if b.arch == i.Arch && b.exts.subsetOf(i.Exts) {
			out = append(out, b)
		}
	}
	return out
}

// GroupID is a short stable id of a native ISA, used as the value of the
// group label so preferred terms can name an ISA group: the first 10 hex
// characters of the SHA-256 of String().
func GroupID(native ISA) string {
	sum := sha256.Sum256([]byte(native.String()))
	return hex.EncodeToString(sum[:])[:10]
}

// maxLabelValue is the longest label value Kubernetes accepts.
const maxLabelValue = 63

// GroupDomainLabel returns the label that makes a node of group id a
// topology domain of its own: key GroupDomainPrefix+id, value the node's
// name. A name longer than a label value may be (63 characters) is cut to
// 52 and ends in "-" and 10 hex characters of its SHA-256, so it stays
// unique in practice and valid (node names are DNS subdomains).
func GroupDomainLabel(id, nodeName string) (key, value string) {
	value = nodeName
	if len(value) > maxLabelValue {
		sum := sha256.Sum256([]byte(nodeName))
		value = strings.TrimRight(nodeName[:52], "-.") + "-" + hex.EncodeToString(sum[:])[:10]
	}
	return GroupDomainPrefix + id, value
}

// WithGroupDomain adds to labels, a node's labels as NodeLabels returns
// them, the GroupDomainLabel of its group for node nodeName, and returns
// labels. Labels without a group are returned unchanged.
func WithGroupDomain(labels map[string]string, nodeName string) map[string]string {
	if id := labels[GroupLabel]; id != "" && nodeName != "" {
		k, v := GroupDomainLabel(id, nodeName)
		labels[k] = v
	}
	return labels
}

// IsGroupDomainLabel reports whether key is a GroupDomainLabel key: a
// per-node label that says nothing about the node's ISA.
func IsGroupDomainLabel(key string) bool {
	return strings.HasPrefix(key, GroupDomainPrefix)
}

// IsOwnedLabel reports whether key is under one of isamatch's prefixes.
func IsOwnedLabel(key string) bool {
	return strings.HasPrefix(key, NativePrefix) || strings.HasPrefix(key, EmuPrefix)
}

// Compact is a short spelling of a RISC-V ISA for messages: the largest
// profile or G it has whole, then the extensions nothing else listed implies
// ("rv64gc_zba_zbb", "rva23u64_zvbc"). ParseRISCV reads it back to the
// same observable extensions; when it would not, Compact is Short. Other
// architectures: String.
func (i ISA) Compact() string {
	if i.Arch != RISCV64 && i.Arch != RISCV32 {
		return i.String()
	}
	want := observable(i)
	var best *bundle
	for k, b := range bundles {
		if b.arch == i.Arch && b.exts.subsetOf(want) && (best == nil || b.exts.count() > best.exts.count()) {
			best = &bundles[k]
		}
	}
	head, rest := "rv"+strconv.Itoa(rvXLEN(i.Arch)), want
	if best != nil {
		rest = want.andNot(best.exts)
		if best.name == "g" {
			head += "g"
		} else {
			head = best.name
		}
	}
	var tokens []int // single letters first, as the grammar wants
	minimal := rv.minimal(rest)
	rest.each(func(k int) { // every single letter (rv64imfd, not rv64imd)
		if len(rvTable[k].name) == 1 || minimal.has(k) {
			tokens = append(tokens, k)
		}
	})
	slices.SortStableFunc(tokens, func(a, b int) int { return cmp.Compare(min(len(rvTable[a].name), 2), min(len(rvTable[b].name), 2)) })
	build := func(skip int) string {
		var b strings.Builder
		b.WriteString(head)
		for _, k := range tokens {
			if k == skip {
				continue
			}
			n := rvTable[k].name
			if len(n) != 1 || best != nil && best.name != "g" {
				b.WriteByte('_')
			}
			b.WriteString(n)
			if rvTable[k].experimental {
				fmt.Fprintf(&b, "%dp%d", rvTable[k].major, rvTable[k].minor)
			}
		}
		return b.String()
	}
	same := func(s string) bool {
		p, err := ParseRISCV(s)
		return err == nil && observable(p) == want
	}
	// Extensions implied only by a combination (C with D gives Zcd) are
	// dropped when the string still reads back the same.
	for k := len(tokens) - 1; k >= 0; k-- {
		if s := build(tokens[k]); len(rvTable[tokens[k]].name) > 1 && same(s) {
			tokens = slices.Delete(tokens, k, k+1)
		}
	}
	if s := build(-1); same(s) {
		return s
	}
	return i.Short()
}
