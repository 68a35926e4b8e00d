package oracle

import (
	"fmt"
	"strings"
)

// x86Levels are the /proc/cpuinfo flags each x86-64 psABI level adds
// (glibc's get-isa-level.h in cpuinfo's spelling: LAHF64 is lahf_lm,
// SSE3 is pni, LZCNT is abm).
var x86Levels = [][]string{
	{"lm", "cmov", "cx8", "fpu", "fxsr", "mmx", "syscall", "sse", "sse2"},
	{"cx16", "lahf_lm", "popcnt", "pni", "ssse3", "sse4_1", "sse4_2"},
	{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
	{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
}

// x86Alias maps compiler (LLVM, GCC) feature names to cpuinfo flags where
// they differ.
var x86Alias = map[string]string{
	"lzcnt": "abm", "sse3": "pni", "sahf": "lahf_lm", "cmpxchg16b": "cx16", "sse4.1": "sse4_1", "sse4.2": "sse4_2",
	"bmi": "bmi1", "pclmul": "pclmulqdq", "rdrnd": "rdrand", "sha": "sha_ni", "prfchw": "3dnowprefetch",
	"avx512vbmi2": "avx512_vbmi2", "avx512vnni": "avx512_vnni", "avx512bitalg": "avx512_bitalg",
	"avx512vpopcntdq": "avx512_vpopcntdq", "avx512bf16": "avx512_bf16",
}

// parseX86 reads "x86-64", "x86-64-v3" and "+feature" suffixes.
func parseX86(s string) (ISA, error) {
	parts := strings.Split(s, "+")
	base := strings.ReplaceAll(parts[0], "_", "-")
	base = strings.Replace(base, "amd64", "x86-64", 1)
	level := 1
	if base != "x86-64" {
		if _, err := fmt.Sscanf(base, "x86-64-v%d", &level); err != nil || level < 1 || level > 4 ||
			base != fmt.Sprintf("x86-64-v%d", level) {
			return ISA{}, fmt.Errorf("oracle reads x86-64 and x86-64-v1..v4, not %q", parts[0])
		}
	}
	i := newISA(AMD64)
	for _, l := range x86Levels[:level] {
		for _, f := range l {
			i.Exts[f] = true
		}
	}
	for _, f := range parts[1:] {
		if a, ok := x86Alias[f]; ok {
			f = a
		}
		if f == "" {
			return ISA{}, fmt.Errorf("%q: empty feature", s)
		}
		i.Exts[f] = true
	}
	return i, nil
}

// arm64Steps are the Features each Armv8.x version makes mandatory, in
// cpuinfo's spelling.
var arm64Steps = [][]string{
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

// arm64Version is an OCI arm64 variant: "", v8, v8.N, v9, v9.N (v9.N has
// v8.(N+5) and SVE2).
func arm64Version(v string) (ISA, error) {
	i := newISA(ARM64)
	major, minor := 8, 0
	if v != "" {
		if _, err := fmt.Sscanf(v, "v%d.%d", &major, &minor); err != nil {
			if _, err := fmt.Sscanf(v, "v%d", &major); err != nil {
				return ISA{}, fmt.Errorf("oracle reads arm64 variants v8.N and v9.N, not %q", v)
			}
		}
	}
	n := minor
	if major == 9 {
		n = min(minor+5, len(arm64Steps)-1)
		i.Exts["sve"], i.Exts["sve2"] = true, true
	} else if major != 8 || minor >= len(arm64Steps) {
		return ISA{}, fmt.Errorf("oracle reads arm64 variants v8.N and v9.N, not %q", v)
	}
	for _, step := range arm64Steps[:n+1] {
		for _, f := range step {
			i.Exts[f] = true
		}
	}
	return i, nil
}

// parseARM64 reads "arm64" and "+feature" suffixes.
func parseARM64(s string) (ISA, error) {
	parts := strings.Split(s, "+")
	if parts[0] != "arm64" && parts[0] != "aarch64" {
		return ISA{}, fmt.Errorf("oracle reads arm64 with +features, not %q", s)
	}
	i, _ := arm64Version("")
	for _, f := range parts[1:] {
		if f == "" {
			return ISA{}, fmt.Errorf("%q: empty feature", s)
		}
		i.Exts[f] = true
	}
	return i, nil
}
