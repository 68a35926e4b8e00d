package isa

import (
	"fmt"
	"strconv"
	"strings"
)

// extVersion is one extension of a normalised ISA string.
type extVersion struct {
	name         string
	major, minor int
}

// parseNormalized is LLVM's RISCVISAInfo::parseNormalizedArchString: every
// extension carries <major>p<minor>, '_' separates all of them, unknown names
// are accepted, duplicates rejected, nothing is implied.
func parseNormalized(s string) (int, []extVersion, error) {
	if err := checkRVChars(s); err != nil {
		return 0, nil, err
	}
	xlen := 0
	rest := s
	switch {
	case strings.HasPrefix(s, "rv32"):
		xlen, rest = 32, s[4:]
	case strings.HasPrefix(s, "rv64"):
		xlen, rest = 64, s[4:]
	}
	if xlen == 0 || rest == "" || (rest[0] != 'i' && rest[0] != 'e') {
		return 0, nil, rvErr("arch string must begin with valid base ISA")
	}
	var out []extVersion
	seen := map[string]bool{}
	for rest != "" {
		ext, after, err := nextRVToken(rest)
		if err != nil {
			return 0, nil, err
		}
		rest = after
		p := strings.LastIndexByte(ext, 'p')
		if p < 0 || p == len(ext)-1 {
			return 0, nil, rvErr("extension lacks version in expected format")
		}
		prefix, minorStr := ext[:p], ext[p+1:]
		minor, err := strconv.Atoi(minorStr)
		if err != nil {
			return 0, nil, rvErr("failed to parse minor version number")
		}
		vs := len(prefix)
		for vs > 0 && isDigit(prefix[vs-1]) {
			vs--
		}
		if vs == len(prefix) {
			return 0, nil, rvErr("extension lacks version in expected format")
		}
		if vs == 0 {
			return 0, nil, rvErr("missing extension name")
		}
		name := prefix[:vs]
		major, err := strconv.Atoi(prefix[vs:])
		if err != nil {
			return 0, nil, rvErr("failed to parse major version number")
		}
		if (name[0] == 'z' || name[0] == 's' || name[0] == 'x') && (len(name) == 1 || isDigit(name[1])) {
			return 0, nil, rvErr("'%c' must be followed by a letter", name[0])
		}
		if seen[name] {
			return 0, nil, rvErr("duplicate extension '%s'", name)
		}
		seen[name] = true
		out = append(out, extVersion{name, major, minor})
	}
	return xlen, out, nil
}

// ParseRISCVAttribute parses an already-normalised ISA string, the form
// compilers record in ELF .riscv.attributes (Tag_RISCV_arch) and print with
// toString ("rv64i2p1_m2p0_a2p1_..."), with LLVM's parseNormalizedArchString
// rules. Versions are validated for form only; extensions isamatch does not
// know are kept in Unknown ("name<major>p<minor>"). Implications are applied.
func ParseRISCVAttribute(s string) (ISA, error) {
	xlen, exts, err := parseNormalized(s)
	if err != nil {
		return ISA{}, &ParseError{Input: s, Err: err, Hint: "accepted: rv32/rv64 then '_'-separated extensions, each with <major>p<minor> (e.g. rv64i2p1_m2p0_zicsr2p0)"}
	}
	var seen ExtSet
	var unknown []string
	for _, e := range exts {
		if i, ok := rv.index[e.name]; ok {
			seen.set(i)
			continue
		}
		unknown = append(unknown, fmt.Sprintf("%s%dp%d", e.name, e.major, e.minor))
	}
	return ISA{Arch: rvArch(xlen), Exts: rvNodeClose(xlen, seen), Unknown: unknown}, nil
}
