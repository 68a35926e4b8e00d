package isa

// The request grammar: what users type in a pod's request, one alternative
// or several separated by '|', and the "did you mean" for architecture
// spellings isamatch does not take.

import (
	"fmt"
	"slices"
	"strings"
)

// Parse parses one alternative as a user types it (strict): RISC-V ISA strings
// and profiles ("rv64gc", "RV64IMFDV", "rva23u64_zvbc"), x86-64 levels with
// optional +features ("x86-64-v3", "x86-64-v2+avx512vnni", "amd64"), arm64 with
// optional +features ("arm64+sve2", "aarch64"), or a bare architecture as the
// kubelet spells it in kubernetes.io/arch ("amd64", "arm64", "riscv64",
// "riscv32"), which means that architecture's base ISA: x86-64, arm64 (fp and
// asimd), rv64i and rv32i, so any node of the architecture satisfies it.
// Errors name the bad token; a spelling users write for an architecture
// ("x86", "aarch32", "riscv", "armv8.2-a") gets a "did you mean".
//
// A RISC-V string is lower-cased first (the paper writes RV64IMFDV), a
// documented deviation from LLVM, which rejects upper case; otherwise it
// follows ParseRISCV exactly.
func Parse(s string) (ISA, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return ISA{}, &ParseError{Input: s, Err: errEmpty, Hint: "accepted: a RISC-V ISA string or profile, x86-64[-vN][+feature], arm64[+feature]"}
	case t == string(RISCV64):
		return parseRISCVRequest(s, "rv64i")
	case t == string(RISCV32):
		return parseRISCVRequest(s, "rv32i")
	case strings.HasPrefix(t, "rv"):
		return parseRISCVRequest(s, t)
	case strings.HasPrefix(t, "x86") || strings.HasPrefix(t, "amd64"):
		return parseX86(s, t)
	case strings.HasPrefix(t, "arm64") || strings.HasPrefix(t, "aarch64"):
		return parseARM64(s, t)
	}
	return ISA{}, &ParseError{Input: s, Err: fmt.Errorf("unknown architecture in %q", s), Hint: archHint(t, anyHint)}
}

const anyHint = "accepted: rv32*/rv64* or a RISC-V profile (rva23u64), riscv64, riscv32, x86-64[-vN][+feature], amd64, x86_64, arm64[+feature], aarch64"

// parseRISCVRequest is ParseRISCV on lower-cased input plus the Zba+Zbb+Zbs
// rule; errors name the user's input s.
func parseRISCVRequest(s, t string) (ISA, error) {
	xlen, exts, err := parseRISCV(t, llvmMC)
	if err != nil {
		hint := rvHintFor(err)
		if slices.Contains(riscvWords, t) {
			hint = archHint(t, hint)
		}
		return ISA{}, &ParseError{Input: s, Err: err, Hint: hint}
	}
	return ISA{Arch: rvArch(xlen), Exts: rvNodeClose(xlen, exts)}, nil
}

// ParseRequest parses "alt | alt | ..." (whitespace around '|' allowed).
func ParseRequest(s string) (Request, error) {
	var r Request
	for k, alt := range strings.Split(s, "|") {
		if strings.TrimSpace(alt) == "" {
			return Request{}, &ParseError{Input: s, Err: fmt.Errorf("alternative %d is empty", k+1),
				Hint: "write alternatives as ISA | ISA, e.g. rv64gcv | x86-64-v3 | arm64+sve"}
		}
		i, err := Parse(alt)
		if err != nil {
			return Request{}, err
		}
		r.Alternatives = append(r.Alternatives, i)
	}
	return r, nil
}

// String prints the request in canonical form, alternatives joined by " | ".
func (r Request) String() string {
	parts := make([]string, len(r.Alternatives))
	for k, a := range r.Alternatives {
		parts[k] = a.Short()
	}
	return strings.Join(parts, " | ")
}

// archHint puts a "did you mean" for t, a lower-cased alternative or its
// architecture part, in front of hint.
func archHint(t, hint string) string {
	sg, note := archSuggestions(t)
	if note != "" {
		hint = note + "; " + hint
	}
	return didYouMean(sg, hint)
}

// archNames are the architecture spellings Parse takes on their own; a typo
// of one of them is suggested by edit distance.
var archNames = []string{"riscv64", "riscv32", "amd64", "x86-64", "x86_64", "arm64", "aarch64", "x86-64-v2", "x86-64-v3", "x86-64-v4"}

// The spellings users write for architectures Parse does not take as they
// are, with what to write instead. A note says why when the spelling names
// something isamatch does not model (32-bit x86 and arm).
var (
	x86Words   = []string{"x86", "x64", "intel64", "em64t", "ia32e"}
	x86_32     = []string{"i386", "i486", "i586", "i686", "386", "x86-32", "x86_32", "x32", "ia32"}
	arm32      = []string{"arm", "arm32", "aarch32", "armhf", "armel", "armv5", "armv6", "armv7", "armv7l", "armv7a", "armv7-a", "armv6l"}
	riscvWords = []string{"riscv", "risc-v", "rv", "riscv-64", "riscv_64", "risc-v64", "rv64", "riscv-32", "riscv_32", "risc-v32", "rv32"}
)

// archSuggestions returns what to write instead of t (a lower-cased
// alternative), and a note when it names something isamatch does not model.
func archSuggestions(t string) (suggestions []string, note string) {
	base, _, _ := strings.Cut(t, "+")
	switch {
	case slices.Contains(x86Words, base):
		return []string{"x86-64", "amd64"}, ""
	case slices.Contains(x86_32, base):
		return []string{"amd64"}, "isamatch models 64-bit x86 only; a 32-bit x86 image runs on amd64 nodes"
	case slices.Contains(arm32, base):
		return []string{"arm64"}, "isamatch models 64-bit arm only; whether an arm64 core runs 32-bit code varies by core"
	case slices.Contains(riscvWords, base):
		if strings.Contains(base, "32") {
			return []string{"riscv32", "rv32i", "rv32gc"}, ""
		}
		return []string{"riscv64", "rv64i", "rv64gc"}, ""
	}
	if s, ok := armVersionSuggestion(base); ok {
		return []string{s}, "arm64 requests name features, not architecture versions"
	}
	if s, ok := x86LevelSuggestion(base); ok {
		return []string{s}, ""
	}
	for _, p := range []string{"risc-v", "riscv"} {
		rest, ok := strings.CutPrefix(t, p)
		if !ok || !(strings.HasPrefix(rest, "64") || strings.HasPrefix(rest, "32")) {
			continue
		}
		// riscv64gc means rv64gc; riscv64+zba means rv64i_zba.
		cand := "rv" + rest
		if x, feats, ok := strings.Cut(rest, "+"); ok {
			cand = "rv" + x + "i_" + strings.ReplaceAll(feats, "+", "_")
		}
		if _, _, err := parseRISCV(cand, llvmMC); err == nil {
			return []string{cand}, ""
		}
	}
	if base == string(RISCV64) || base == string(RISCV32) {
		// The architecture is right, what follows '+' is not: RISC-V
		// extensions follow an ISA string after '_'.
		return nil, "RISC-V extensions follow an ISA string after '_' (rv64i_zba_zbb), not '+'"
	}
	return suggest(base, archNames), ""
}

// armVersionSuggestion turns an architecture version (armv8.2-a, arm64v8,
// arm64/v8.2, aarch64-v9) into the arm64 request with that version's
// mandatory features, the set FromPlatform gives the OCI variant.
func armVersionSuggestion(base string) (string, bool) {
	for _, p := range []string{"arm64/v", "arm64-v", "arm64v", "aarch64/v", "aarch64-v", "aarch64v", "armv"} {
		v, ok := strings.CutPrefix(base, p)
		if !ok {
			continue
		}
		v = strings.TrimSuffix(strings.TrimSuffix(v, "-a"), "a")
		if set, ok := arm64Versions[v]; ok {
			return arm64String(set), true
		}
	}
	return "", false
}

// x86LevelSuggestion turns a level written without its dash (x86-64v3,
// amd64v3, x64-v3) into x86-64-vN.
func x86LevelSuggestion(base string) (string, bool) {
	for _, p := range []string{"x86-64v", "x86_64v", "amd64v", "x64-v", "x64v", "x86-v", "x86v"} {
		if n, ok := strings.CutPrefix(base, p); ok && len(n) == 1 && n[0] >= '1' && n[0] <= '4' {
			if n == "1" {
				return "x86-64", true
			}
			return "x86-64-v" + n, true
		}
	}
	return "", false
}
