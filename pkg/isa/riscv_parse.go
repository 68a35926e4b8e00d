package isa

// The strict RISC-V parser, LLVM's RISCVISAInfo::parseArchString: lexing,
// versions and the error texts. The closure it ends with is riscv_closure.go.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseRISCV parses a RISC-V ISA string with LLVM RISCVISAInfo::parseArchString
// semantics (newest LLVM, experimental extensions enabled with their exact
// version, as llvm-mc does), applying implications. Lower case only, as LLVM.
// The one addition to LLVM's table is xtheadvector (GCC's name for T-Head's
// vector 0.7.1), which LLVM does not know.
func ParseRISCV(s string) (ISA, error) {
	xlen, exts, err := parseRISCV(s, llvmMC)
	if err != nil {
		return ISA{}, &ParseError{Input: s, Err: err, Hint: rvHintFor(err)}
	}
	return ISA{Arch: rvArch(xlen), Exts: exts}, nil
}

const rvHint = "accepted: rv32/rv64 then i, e or g, single letters m a f d q c b v h, then '_'-separated z*/s*/x* extensions (e.g. rv64gcv_zba_zbb), or a profile: rvi20u32 rvi20u64 rva20u64 rva22u64 rva23u64 rvb23u64 rva20s64 rva22s64 rva23s64 rvb23s64"

// rvOptions mirror the flags of LLVM's parseArchString.
type rvOptions struct {
	experimental bool // EnableExperimentalExtension
	versionCheck bool // ExperimentalExtensionVersionCheck
}

var llvmMC = rvOptions{experimental: true, versionCheck: true}

func rvErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) string {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return s[:n]
}

func typeDesc(c byte) string {
	switch c {
	case 's':
		return "standard supervisor-level extension"
	case 'x':
		return "non-standard user-level extension"
	}
	return "standard user-level extension"
}

// lastNonVersion is LLVM's findLastNonVersionCharacter.
func lastNonVersion(ext string) int {
	pos := len(ext) - 1
	for pos > 0 && isDigit(ext[pos]) {
		pos--
	}
	if pos > 0 && ext[pos] == 'p' && isDigit(ext[pos-1]) {
		pos--
		for pos > 0 && isDigit(ext[pos]) {
			pos--
		}
	}
	return pos
}

// extError is an error about one extension name; its text is LLVM's.
type extError struct {
	msg  string
	name string
}

func (e *extError) Error() string { return e.msg }

func unsupportedExt(name string) error {
	if len(name) == 1 {
		return &extError{fmt.Sprintf("unsupported standard user-level extension '%s'", name), name}
	}
	return &extError{fmt.Sprintf("unsupported %s '%s'", typeDesc(name[0]), name), name}
}

// rvHintFor adds "did you mean" suggestions to the generic hint when err is
// about an unknown extension name.
func rvHintFor(err error) string {
	var e *extError
	if !errors.As(err, &e) || len(e.name) < 2 {
		return rvHint
	}
	return didYouMean(suggest(e.name, rv.names), rvHint)
}

// rvVersion is LLVM's getExtensionVersion: it validates the version that
// follows ext in in and returns how many bytes it used.
func rvVersion(ext, in string, o rvOptions) (int, error) {
	majorStr := leadingDigits(in)
	rest := in[len(majorStr):]
	minorStr := ""
	if majorStr != "" && strings.HasPrefix(rest, "p") {
		minorStr = leadingDigits(rest[1:])
		if minorStr == "" {
			return 0, rvErr("minor version number missing after 'p' for extension '%s'", ext)
		}
	}
	var major, minor int
	var err error
	if majorStr != "" {
		if major, err = strconv.Atoi(majorStr); err != nil {
			return 0, rvErr("Failed to parse major version number for extension '%s'", ext)
		}
	}
	if minorStr != "" {
		if minor, err = strconv.Atoi(minorStr); err != nil {
			return 0, rvErr("Failed to parse minor version number for extension '%s'", ext)
		}
	}
	consumed := len(majorStr)
	if minorStr != "" {
		consumed += len(minorStr) + 1
	}
	verText := majorStr
	if minorStr != "" {
		verText += "." + minorStr
	}
	idx, known := rv.index[ext]
	if known && rvTable[idx].experimental {
		e := rvTable[idx]
		if !o.experimental {
			return 0, rvErr("requires '-menable-experimental-extensions' for experimental extension '%s'", ext)
		}
		if o.versionCheck && majorStr == "" {
			return 0, rvErr("experimental extension requires explicit version number `%s`", ext)
		}
		if o.versionCheck && (major != e.major || minor != e.minor) {
			return 0, rvErr("unsupported version number %s for experimental extension '%s' (this compiler supports %d.%d)", verText, ext, e.major, e.minor)
		}
		return consumed, nil
	}
	if ext == "g" || majorStr == "" {
		return consumed, nil
	}
	if known && rvTable[idx].major == major && rvTable[idx].minor == minor {
		return consumed, nil
	}
	if !known {
		return 0, unsupportedExt(ext)
	}
	return 0, rvErr("unsupported version number %s for extension '%s'", verText, ext)
}

// nextRVToken splits the next '_'-separated token off a non-empty rest of an
// ISA string.
func nextRVToken(rest string) (tok, after string, err error) {
	if rest[0] == '_' {
		if len(rest) == 1 || rest[1] == '_' {
			return "", "", rvErr("extension name missing after separator '_'")
		}
		rest = rest[1:]
	}
	tok = rest
	if k := strings.IndexByte(rest, '_'); k >= 0 {
		tok = rest[:k]
	}
	return tok, rest[len(tok):], nil
}

// checkRVChars is LLVM's first lexical check of an ISA string.
func checkRVChars(s string) error {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if !(isDigit(c) || (c >= 'a' && c <= 'z') || c == '_') {
			return rvErr("string may only contain [a-z0-9_]")
		}
	}
	return nil
}

// parseRISCV is LLVM's RISCVISAInfo::parseArchString followed by
// postProcessAndChecking. It returns the XLEN and the closed extension set.
func parseRISCV(s string, o rvOptions) (int, ExtSet, error) {
	var none ExtSet
	if err := checkRVChars(s); err != nil {
		return 0, none, err
	}
	xlen := 0
	rest := s
	switch {
	case strings.HasPrefix(s, "rv32"):
		xlen, rest = 32, s[4:]
	case strings.HasPrefix(s, "rv64"):
		xlen, rest = 64, s[4:]
	default:
		if p, ok := findProfile(s); ok {
			if p.experimental && !o.experimental {
				return 0, none, rvErr("requires '-menable-experimental-extensions' for profile '%s'", p.name)
			}
			tail := s[len(p.name):]
			if tail != "" && tail[0] != '_' {
				return 0, none, rvErr("additional extensions must be after separator '_'")
			}
			return parseRISCV(p.march+tail, o)
		}
	}
	if xlen == 0 || rest == "" {
		return 0, none, rvErr("string must begin with rv32{i,e,g,y}, rv64{i,e,g,y}, or a supported profile name")
	}
	var seen ExtSet
	base := rest[0]
	rest = rest[1:]
	isG := false
	switch base {
	case 'i', 'e', 'y':
		n, err := rvVersion(string(base), rest, o)
		if err != nil {
			return 0, none, err
		}
		seen.set(rv.index[string(base)])
		rest = rest[n:]
	case 'g':
		if rest != "" && isDigit(rest[0]) {
			return 0, none, rvErr("version not supported for 'g'")
		}
		isG = true
		for _, n := range []int{rv.i, rv.m, rv.a, rv.f, rv.d} {
			seen.set(n)
		}
	default:
		return 0, none, rvErr("first letter after 'rv%d' should be 'e', 'i', 'g' or 'y'", xlen)
	}
	for rest != "" {
		tok, after, err := nextRVToken(rest)
		if err != nil {
			return 0, none, err
		}
		rest = after
		for tok != "" {
			var name, vers, desc string
			single := false
			switch c := tok[0]; {
			case strings.IndexByte(allStdExts, c) >= 0:
				name, vers, desc, single = tok[:1], tok[1:], "standard user-level extension", true
			case c == 'z' || c == 's' || c == 'x':
				desc = typeDesc(c)
				pos := lastNonVersion(tok) + 1
				name, vers = tok[:pos], tok[pos:]
				tok = ""
				if len(name) == 1 {
					return 0, none, rvErr("%s name missing after '%c'", desc, c)
				}
			default:
				return 0, none, rvErr("invalid standard user-level extension '%c'", c)
			}
			n, err := rvVersion(name, vers, o)
			if err != nil {
				return 0, none, err
			}
			if single {
				tok = vers[n:]
			}
			idx, ok := rv.index[name]
			if !ok {
				return 0, none, unsupportedExt(name)
			}
			if seen.has(idx) {
				return 0, none, rvErr("duplicated %s '%s'", desc, name)
			}
			seen.set(idx)
		}
	}
	if isG {
		seen.set(rv.zicsr)
		seen.set(rv.zifencei)
	}
	exts := rvPostProcess(xlen, seen)
	if err := rvCheck(xlen, exts); err != nil {
		return 0, none, err
	}
	return xlen, exts, nil
}
