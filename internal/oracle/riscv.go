package oracle

import (
	"fmt"
	"regexp"
	"strings"
)

// implies is the direct implication table of the RISC-V extensions the
// suites use, as LLVM's RISCVFeatures.td states them. Extensions missing
// here imply nothing.
var implies = map[string][]string{
	"g":       {"i", "m", "a", "f", "d", "zicsr", "zifencei"},
	"m":       {"zmmul"},
	"a":       {"zaamo", "zalrsc"},
	"f":       {"zicsr"},
	"d":       {"f"},
	"c":       {"zca"},
	"b":       {"zba", "zbb", "zbs"},
	"v":       {"zvl128b", "zve64d"},
	"zve64d":  {"zve64f", "d"},
	"zve64f":  {"zve64x", "zve32f"},
	"zve64x":  {"zve32x", "zvl64b"},
	"zve32f":  {"zve32x", "f"},
	"zve32x":  {"zicsr", "zvl32b"},
	"zvl128b": {"zvl64b"},
	"zvl64b":  {"zvl32b"},
	"zicntr":  {"zicsr"},
	"zihpm":   {"zicsr"},
	"zfhmin":  {"f"},
	"zfh":     {"zfhmin"},
	"zfa":     {"f"},
	"zcb":     {"zca"},
	"zcd":     {"d", "zca"},
	"zcf":     {"f", "zca"},
	"zcmop":   {"zca"},
	"zvfhmin": {"zve32f"},
	"zvbb":    {"zvkb"},
	"zvkb":    {"zve32x"},
}

// known are the extensions whose implications the table states in full;
// the LLVM cross-check covers strings made of these only.
var known = func() map[string]bool {
	k := map[string]bool{"i": true, "e": true, "zicsr": true, "zifencei": true, "zmmul": true, "zaamo": true,
		"zalrsc": true, "zca": true, "zba": true, "zbb": true, "zbs": true, "zvl32b": true, "zicbom": true,
		"zicbop": true, "zicboz": true, "zihintpause": true, "zihintntl": true, "zicond": true, "zimop": true,
		"zawrs": true, "zkt": true, "zvkt": true, "supm": true, "h": true}
	for e := range implies {
		k[e] = true
	}
	for e := range unreported {
		k[e] = true
	}
	return k
}()

// unreported are what the profiles require of caches and the memory model:
// Linux's isa line never lists them, so a need for them is not checked.
var unreported = map[string]bool{
	"za64rs": true, "za128rs": true, "zic64b": true, "ziccif": true, "ziccrse": true,
	"ziccamoa": true, "zicclsm": true,
}

// profiles are the RVA profiles' mandatory extensions (profiles.adoc,
// rva23-profile.adoc), each as an ISA string.
var profiles = map[string]string{
	"rva20u64": "rv64imafdc_zicsr_zicntr_ziccif_ziccrse_ziccamoa_za128rs_zicclsm",
	"rva22u64": "rv64imafdc_zicsr_zicntr_ziccif_ziccrse_ziccamoa_zicclsm_za64rs_zihpm_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zfhmin_zkt",
	"rva23u64": "rv64imafdcv_zicsr_zicntr_ziccif_ziccrse_ziccamoa_zicclsm_za64rs_zihpm_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zfhmin_zkt" +
		"_zvfhmin_zvbb_zvkt_zihintntl_zicond_zimop_zcmop_zcb_zfa_zawrs_supm",
}

// parseRISCV reads "rv64imafdc_zicsr2p0_zba", "rv64gcv" or a profile
// followed by "_ext" tokens, and closes the set under implies.
func parseRISCV(s string) (ISA, error) {
	i := newISA(RISCV64)
	for name, exp := range profiles {
		if rest, ok := strings.CutPrefix(s, name); ok && (rest == "" || rest[0] == '_') {
			p, err := parseRISCV(exp)
			if err != nil {
				return ISA{}, err
			}
			s, i = "rv64i"+rest, p
			break
		}
	}
	rv32 := strings.HasPrefix(s, "rv32")
	if !rv32 && !strings.HasPrefix(s, "rv64") {
		return ISA{}, fmt.Errorf("oracle reads rv32 and rv64 only, not %q", s)
	}
	tokens := strings.Split(s[4:], "_")
	if tokens[0] == "" || !strings.ContainsRune("ieg", rune(tokens[0][0])) {
		return ISA{}, fmt.Errorf("%q: the base must be i, e or g", s)
	}
	for _, tok := range tokens {
		switch {
		case tok == "":
			return ISA{}, fmt.Errorf("%q: empty extension", s)
		case strings.ContainsRune("zsx", rune(tok[0])):
			i.Exts[stripVersion(tok)] = true
		default:
			for j := 0; j < len(tok); {
				c := tok[j]
				if c < 'a' || c > 'z' {
					return ISA{}, fmt.Errorf("%q: bad letter %q", s, c)
				}
				i.Exts[string(c)] = true
				j++
				// A version: digits, optionally "p" and digits.
				for j < len(tok) && (isDigit(tok[j]) || tok[j] == 'p' && j+1 < len(tok) && isDigit(tok[j+1]) && isDigit(tok[j-1])) {
					j++
				}
			}
		}
	}
	closeRISCV(i, rv32)
	return i, nil
}

// closeRISCV adds everything the extensions imply, G's expansion and the C
// rules (C with D is Zcd; C with F on RV32 is Zcf) and LLVM's combining
// rule (Zba, Zbb and Zbs are B).
func closeRISCV(i ISA, rv32 bool) {
	for changed := true; changed; {
		changed = false
		add := func(e string) {
			if !i.Exts[e] {
				i.Exts[e], changed = true, true
			}
		}
		for e := range i.Exts {
			for _, x := range implies[e] {
				add(x)
			}
		}
		if i.Exts["c"] && i.Exts["d"] {
			add("zcd")
		}
		if i.Exts["zba"] && i.Exts["zbb"] && i.Exts["zbs"] {
			add("b")
		}
		if rv32 && i.Exts["c"] && i.Exts["f"] {
			add("zcf")
		}
	}
	delete(i.Exts, "g")
}

// stripVersion drops a trailing version ("2p0", "1") from a multi-letter
// extension.
func stripVersion(tok string) string { return versionRE.ReplaceAllString(tok, "") }

var versionRE = regexp.MustCompile(`[0-9]+(p[0-9]+)?$`)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// riscvHost reads a cpuinfo isa line. Kernels before 6.4 print no zicsr,
// zifencei or zicntr, which their base I then included: a line naming none
// of them has all three. A T-Head C9xx (mvendorid 0x5b7, marchid 0)
// reporting "v" has vector 0.7.1, which is xtheadvector.
func riscvHost(line string, block map[string]string) (ISA, error) {
	line = strings.ToLower(line)
	i, err := parseRISCV(line)
	if err != nil {
		return ISA{}, err
	}
	if !i.Exts["zifencei"] && !i.Exts["zicntr"] && !strings.Contains(line, "zicsr") {
		line += "_zicsr_zifencei_zicntr"
		if i, err = parseRISCV(line); err != nil {
			return ISA{}, err
		}
	}
	old := strings.HasPrefix(block["cpu-vector"], "0.7")
	thead := block["mvendorid"] == "0x5b7" && block["marchid"] == "0x0"
	if i.Exts["v"] && (old || thead) {
		first, rest, _ := strings.Cut(line, "_")
		fixed := first[:4] + strings.Replace(first[4:], "v", "", 1)
		if rest != "" {
			fixed += "_" + rest
		}
		j, err := parseRISCV(fixed + "_xtheadvector")
		if err != nil {
			return ISA{}, err
		}
		return j, nil
	}
	return i, nil
}
