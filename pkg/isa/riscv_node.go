package isa

import (
	"fmt"
	"slices"
	"strings"
)

// scanResult is what the tolerant RISC-V scanner found.
type scanResult struct {
	xlen    int
	seen    ExtSet
	unknown []string
	multi   bool // a standard multi-letter (z*/s*) extension was present
}

// named reports whether the string itself (before implications) named any
// of the given extensions.
func (r *scanResult) named(exts ...int) bool {
	for _, e := range exts {
		if r.seen.has(e) {
			return true
		}
	}
	return false
}

// scanTolerant reads a RISC-V ISA string the way kernels and compilers print
// it: any letter order, versions anywhere, 's'/'u' misa letters, duplicates,
// vendor words. Unknown tokens are kept, not rejected. Only a string that does
// not start with rv32/rv64 (or a profile) and a base letter is an error.
func scanTolerant(in string) (scanResult, error) {
	var r scanResult
	s := strings.ToLower(strings.TrimSpace(in))
	s = strings.Trim(s, "\"'`")
	switch {
	case strings.HasPrefix(s, "rv32"):
		r.xlen, s = 32, s[4:]
	case strings.HasPrefix(s, "rv64"):
		r.xlen, s = 64, s[4:]
	default:
		if p, ok := findProfile(s); ok {
			tail := strings.TrimPrefix(s[len(p.name):], "_")
			s = strings.TrimPrefix(p.march, p.march[:4])
			r.xlen = 64
			if strings.HasPrefix(p.march, "rv32") {
				r.xlen = 32
			}
			if tail != "" {
				s += "_" + tail
			}
			break
		}
		return r, fmt.Errorf("must start with rv32 or rv64")
	}
	if s == "" || strings.IndexByte("iegy", s[0]) < 0 {
		return r, fmt.Errorf("first letter after 'rv%d' should be 'i', 'e', 'g' or 'y'", r.xlen)
	}
	tokens := strings.Split(s, "_")
	r.scanLetters(tokens[0])
	for _, tok := range tokens[1:] {
		r.scanToken(tok)
	}
	slices.Sort(r.unknown)
	r.unknown = slices.Compact(r.unknown)
	return r, nil
}

func (r *scanResult) addUnknown(tok string) {
	if tok != "" {
		r.unknown = append(r.unknown, tok)
	}
}

// skipVersion returns how many bytes of a version ("2", "2p0") start s.
func skipVersion(s string) int {
	n := len(leadingDigits(s))
	if n > 0 && n < len(s) && s[n] == 'p' {
		if m := len(leadingDigits(s[n+1:])); m > 0 {
			n += 1 + m
		}
	}
	return n
}

// scanLetters reads the first token: base letter and single letters, with
// optional versions, possibly followed by a multi-letter extension glued on
// (the Kendryte K510 kernel prints "c2p0xv5-0p0").
func (r *scanResult) scanLetters(tok string) {
	for k := 0; k < len(tok); {
		c := tok[k]
		switch {
		case c == 'z' || c == 'x':
			r.scanToken(tok[k:])
			return
		case c == 's' || c == 'u':
			// Privilege modes from misa, printed by old and vendor kernels.
			k++
		case c == 'g':
			for _, n := range []int{rv.i, rv.m, rv.a, rv.f, rv.d, rv.zicsr, rv.zifencei} {
				r.seen.set(n)
			}
			k++
		case c >= 'a' && c <= 'z':
			k++
			v := skipVersion(tok[k:])
			if idx, ok := rv.index[string(c)]; ok {
				r.seen.set(idx)
				// ISA spec 2.2 (i2p0) still contained Zicsr and Zifencei.
				if c == 'i' && strings.HasPrefix(tok[k:k+v], "2p0") {
					r.seen.set(rv.zicsr)
					r.seen.set(rv.zifencei)
				}
			} else {
				r.addUnknown(string(c))
			}
			k += v
		default:
			r.addUnknown(tok[k:])
			return
		}
	}
}

// scanToken reads one '_'-separated token after the first.
func (r *scanResult) scanToken(tok string) {
	if tok == "" {
		return
	}
	name := tok
	if p := lastNonVersion(tok) + 1; p > 1 {
		name = tok[:p]
	}
	if idx, ok := rv.index[name]; ok && len(name) > 1 {
		r.seen.set(idx)
		if name[0] == 'z' || name[0] == 's' {
			r.multi = true
		}
		return
	}
	// Single letters after '_' ("rv32i_m_a"): all known letters, with versions.
	ok := true
	var letters ExtSet
	for k := 0; k < len(tok) && ok; {
		idx, known := rv.index[string(tok[k])]
		if !known || strings.IndexByte(allStdExts, tok[k]) < 0 {
			ok = false
			break
		}
		letters.set(idx)
		k++
		k += skipVersion(tok[k:])
	}
	if ok {
		r.seen = r.seen.or(letters)
		return
	}
	r.addUnknown(tok)
}

// theadPreV1 reports whether the hints describe a T-Head core whose kernel
// prints the pre-ratification vector 0.7.1 as 'v'.
func theadPreV1(h Hints) bool {
	vv := strings.TrimSpace(h.VectorVersion)
	if strings.HasPrefix(vv, "0.") {
		return true
	}
	if !strings.EqualFold(strings.TrimSpace(h.MVendorID), "0x5b7") {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(h.MArchID)) {
	case "", "0", "0x0":
		return true
	}
	u := strings.ToLower(strings.TrimSpace(h.UArch))
	for _, c := range []string{"thead,c906", "thead,c910", "thead,c920"} {
		if strings.HasPrefix(u, c) {
			return true
		}
	}
	return false
}

// ParseCPUInfoRISCV parses a /proc/cpuinfo "isa"/"hart isa" value tolerantly
// (the caller strips the key and separator):
//   - 's' and 'u' letters (privilege modes from misa) are dropped; single
//     letters and multi-letter extensions may come in any order, with
//     versions ("rv64i2p0m2p0..."), duplicated or not;
//   - vendor and unknown tokens ("xv5-0p0", "ime") are kept in Unknown;
//   - kernels before 6.4 print only single letters (or, like SpacemiT's 6.1,
//     a few newer multi-letter extensions), and their base I then included
//     Zicsr, Zifencei and the counters: when the string has no standard
//     multi-letter extension at all, or names none of zicsr, zifencei and
//     zicntr (every kernel since 6.4 prints them), all three are added;
//   - on a T-Head core with the pre-1.0 vector (see Hints) a bare 'v' means
//     xtheadvector: v is dropped (with what only v implied) and xtheadvector
//     set, so a V request never matches it;
//   - implications and LLVM's procedural rules are applied; dependency
//     errors are not raised (the kernel is the authority on what it runs).
func ParseCPUInfoRISCV(line string, h Hints) (ISA, error) {
	r, err := scanTolerant(line)
	if err != nil {
		return ISA{}, &ParseError{Input: line, Err: fmt.Errorf("cpuinfo isa: %w", err)}
	}
	if !r.multi || !r.named(rv.zicsr, rv.zifencei, rv.zicntr) {
		r.seen.set(rv.zicsr)
		r.seen.set(rv.zifencei)
		r.seen.set(rv.zicntr)
	}
	if r.seen.has(rv.v) && theadPreV1(h) {
		r.seen.clear(rv.v)
		r.seen.set(rv.xtheadvector)
	}
	return ISA{Arch: rvArch(r.xlen), Exts: rvNodeClose(r.xlen, r.seen), Unknown: r.unknown}, nil
}

// ParseGCCMarch parses the -march value GCC prints (-Q --help=target,
// "--with-arch=" in gcc -v, "-march=" in verbose-asm headers, or the versioned
// .attribute arch string), tolerating GCC-only spellings: any single-letter
// order, versions on any extension (i2p0 = ISA spec 2.2, which still contains
// zicsr and zifencei), duplicates, and extensions LLVM does not know (kept in
// Unknown). A "-march=" or "--with-arch=" prefix and quotes are stripped.
// Profile names expand to LLVM's lists.
func ParseGCCMarch(s string) (ISA, error) {
	t := strings.TrimSpace(s)
	for _, p := range []string{"--with-arch=", "-march="} {
		t = strings.TrimPrefix(t, p)
	}
	r, err := scanTolerant(t)
	if err != nil {
		return ISA{}, &ParseError{Input: s, Err: fmt.Errorf("gcc -march: %w", err)}
	}
	return ISA{Arch: rvArch(r.xlen), Exts: rvNodeClose(r.xlen, r.seen), Unknown: r.unknown}, nil
}
