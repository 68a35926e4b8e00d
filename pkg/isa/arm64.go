package isa

import (
	"fmt"
	"slices"
	"strings"
)

// arm64Names are the Linux /proc/cpuinfo "Features" names of user-visible
// ISA features (arch/arm64/kernel/cpuinfo.c hwcap_str order). evtstrm and
// cpuid are not instructions and are left out.
var arm64Names = []string{
	"fp", "asimd", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp",
	"asimdhp", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3",
	"sm4", "asimddp", "sha512", "sve", "asimdfhm", "dit", "uscat", "ilrcpc",
	"flagm", "ssbs", "sb", "paca", "pacg", "gcs", "cmpbr", "fprcvt", "f8mm8",
	"f8mm4", "sve_f16mm", "sve_eltperm", "sve_aes2", "sve_bfscale", "sve2p2",
	"sme2p2", "sme_sbitperm", "sme_aes", "sme_sfexpa", "sme_stmop", "sme_smop4",
	"dcpodp", "sve2", "sveaes", "svepmull", "svebitperm", "svesha3", "svesm4",
	"flagm2", "frint", "svei8mm", "svef32mm", "svef64mm", "svebf16", "i8mm",
	"bf16", "dgh", "rng", "bti", "mte", "ecv", "afp", "rpres", "mte3", "sme",
	"smei16i64", "smef64f64", "smei8i32", "smef16f32", "smeb16f32", "smef32f32",
	"smefa64", "wfxt", "ebf16", "sveebf16", "cssc", "rprfm", "sve2p1", "sme2",
	"sme2p1", "smei16i32", "smebi32i32", "smeb16b16", "smef16f16", "mops", "hbc",
	"sveb16b16", "lrcpc3", "lse128", "fpmr", "lut", "faminmax", "f8cvt", "f8fma",
	"f8dp4", "f8dp2", "f8e4m3", "f8e5m2", "smelutv2", "smef8f16", "smef8f32",
	"smesf8fma", "smesf8dp4", "smesf8dp2", "poe",
}

var arm64Implies = map[string][]string{
	"asimd": {"fp"}, "fphp": {"fp"}, "asimdhp": {"asimd", "fphp"},
	"asimdrdm": {"asimd"}, "asimddp": {"asimd"}, "asimdfhm": {"asimdhp"},
	"aes": {"asimd"}, "pmull": {"aes"}, "sha1": {"asimd"}, "sha2": {"sha1"},
	"sha512": {"sha2"}, "sha3": {"sha2"}, "sm3": {"asimd"}, "sm4": {"asimd"},
	"jscvt": {"fp"}, "fcma": {"asimd"}, "ilrcpc": {"lrcpc"}, "lrcpc3": {"ilrcpc"},
	"dcpodp": {"dcpop"}, "flagm2": {"flagm"}, "sve": {"asimd"}, "sve2": {"sve"},
	"sveaes": {"sve2", "aes"}, "svepmull": {"sveaes"}, "svebitperm": {"sve2"},
	"svesha3": {"sve2", "sha3"}, "svesm4": {"sve2", "sm4"}, "svei8mm": {"sve", "i8mm"},
	"svef32mm": {"sve"}, "svef64mm": {"sve"}, "svebf16": {"sve", "bf16"},
	"sveebf16": {"svebf16", "ebf16"}, "ebf16": {"bf16"}, "sve2p1": {"sve2"},
	"sve2p2": {"sve2p1"}, "sveb16b16": {"sve2"}, "mte3": {"mte"},
	"sme2": {"sme"}, "sme2p1": {"sme2"}, "sme2p2": {"sme2p1"},
	"smei16i64": {"sme"}, "smef64f64": {"sme"}, "smei8i32": {"sme"},
	"smef16f32": {"sme"}, "smeb16f32": {"sme"}, "smef32f32": {"sme"},
	"smefa64": {"sme"}, "smei16i32": {"sme2"}, "smebi32i32": {"sme2"},
	"smeb16b16": {"sme2"}, "smef16f16": {"sme2"}, "smelutv2": {"sme2"},
	"smef8f16": {"sme2"}, "smef8f32": {"sme2"},
}

var arm64 = newFamily("arm64", arm64Names, arm64Implies, map[string]string{"lse": "atomics", "neon": "asimd", "crc": "crc32"})

// arm64NotISA are Features tokens that are not instructions.
var arm64NotISA = []string{"evtstrm", "cpuid"}

// arm64Versions maps OCI arm64 variants (containerd spelling, without the
// leading v) to the user-visible features the architecture version makes
// mandatory. Features that live in the HINT space (paca/pacg, bti) and run
// as NOPs on older cores are not required.
//
//	8.0 fp asimd              8.1 + crc32 atomics asimdrdm   8.2 + dcpop
//	8.3 + jscvt fcma lrcpc    8.4 + dit uscat ilrcpc flagm asimddp
//	8.5 + sb ssbs flagm2 frint dcpodp   8.6 + bf16 i8mm   8.7 + afp wfxt
//	8.8 + mops hbc            8.9 + cssc
//	9.N = 8.(N+5) + sve sve2  (9.5..9.7 = 9.4)
var arm64Versions = func() map[string]ExtSet {
	steps := [][]string{
		{"fp", "asimd"},
		{"crc32", "atomics", "asimdrdm"},
		{"dcpop"},
		{"jscvt", "fcma", "lrcpc"},
		{"dit", "uscat", "ilrcpc", "flagm", "asimddp"},
		{"sb", "ssbs", "flagm2", "frint", "dcpodp"},
		{"bf16", "i8mm"},
		{"afp", "wfxt"},
		{"mops", "hbc"},
		{"cssc"},
	}
	m := map[string]ExtSet{}
	var acc ExtSet
	v8 := make([]ExtSet, len(steps))
	for n, st := range steps {
		acc = acc.or(arm64.mustSet(st...))
		v8[n] = arm64.close(acc)
		m[fmt.Sprintf("8.%d", n)] = v8[n]
	}
	m["8"] = v8[0]
	sve := arm64.mustSet("sve", "sve2")
	for n := 0; n <= 7; n++ {
		base := v8[min(n+5, len(v8)-1)]
		m[fmt.Sprintf("9.%d", n)] = arm64.close(base.or(sve))
	}
	m["9"] = m["9.0"]
	return m
}()

// ParseARM64Features builds an arm64 ISA from /proc/cpuinfo "Features"
// tokens. fp and asimd are always present (the Linux arm64 user ABI needs
// them); evtstrm and cpuid are ignored; unknown tokens are kept in Unknown.
func ParseARM64Features(features []string) ISA {
	s := arm64Versions["8"]
	var unknown []string
	for _, f := range features {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" || slices.Contains(arm64NotISA, f) {
			continue
		}
		if i, ok := arm64.lookup(f); ok {
			s.set(i)
		} else {
			unknown = append(unknown, f)
		}
	}
	slices.Sort(unknown)
	return ISA{Arch: ARM64, Exts: arm64.close(s), Unknown: slices.Compact(unknown)}
}

const arm64Hint = "accepted: arm64 or aarch64, optionally followed by +feature using /proc/cpuinfo Features names (e.g. arm64+sve2+i8mm)"

func parseARM64(in, s string) (ISA, error) {
	base, feats, hasFeats := strings.Cut(s, "+")
	if base != "arm64" && base != "aarch64" {
		return ISA{}, &ParseError{Input: in, Err: fmt.Errorf("unknown arm64 base %q", base), Hint: archHint(base, arm64Hint)}
	}
	set := arm64Versions["8"]
	if hasFeats {
		var err error
		if set, err = arm64.addFeatures(in, "arm64", set, feats); err != nil {
			return ISA{}, err
		}
	}
	return ISA{Arch: ARM64, Exts: set}, nil
}

func arm64String(s ExtSet) string {
	var b strings.Builder
	b.WriteString("arm64")
	for _, n := range arm64.list(s.andNot(arm64Versions["8"])) {
		b.WriteByte('+')
		b.WriteString(n)
	}
	return b.String()
}
