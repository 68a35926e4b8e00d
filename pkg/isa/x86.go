package isa

import (
	"fmt"
	"strconv"
	"strings"
)

// x86Names is the amd64 feature table in canonical order: the psABI level
// features first (v1..v4), then the other user-visible ISA extensions. Names
// are the GCC/LLVM spellings (-m<name>, target("<name>")).
var x86Names = []string{
	// x86-64 (v1)
	"x87", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2",
	// x86-64-v2
	"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf",
	// x86-64-v3
	"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
	// x86-64-v4
	"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
	// others
	"aes", "pclmul", "sha", "sha512", "sm3", "sm4", "rdrnd", "rdseed", "adx",
	"xsaveopt", "xsavec", "xsaves", "fsgsbase", "clflushopt", "clwb", "prfchw",
	"rdpid", "rdpru", "pku", "vaes", "vpclmulqdq", "gfni",
	"avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg",
	"avx512vpopcntdq", "avx512bf16", "avx512fp16", "avx512vp2intersect",
	"avx512er", "avx512pf", "avx5124vnniw", "avx5124fmaps",
	"avxvnni", "avxifma", "avxvnniint8", "avxneconvert", "avxvnniint16",
	"amx-tile", "amx-bf16", "amx-int8", "amx-fp16", "amx-complex",
	"movdiri", "movdir64b", "waitpkg", "serialize", "tsxldtrk", "uintr",
	"enqcmd", "cldemote", "rtm", "hle", "cmpccxadd", "prefetchi", "wbnoinvd",
	"sse4a", "xop", "fma4", "tbm", "lwp", "clzero", "mwaitx", "shstk",
}

// x86Aliases maps Linux /proc/cpuinfo spellings to the canonical names.
var x86Aliases = map[string]string{
	"fpu": "x87", "pni": "sse3", "sse4_1": "sse4.1", "sse4_2": "sse4.2",
	"lahf_lm": "sahf", "abm": "lzcnt", "bmi1": "bmi", "pclmulqdq": "pclmul",
	"sha_ni": "sha", "rdrand": "rdrnd", "3dnowprefetch": "prfchw",
	"avx512_vbmi2": "avx512vbmi2", "avx512_vnni": "avx512vnni",
	"avx512_bitalg": "avx512bitalg", "avx512_vpopcntdq": "avx512vpopcntdq",
	"avx512_bf16": "avx512bf16", "avx512_fp16": "avx512fp16",
	"avx512_vp2intersect": "avx512vp2intersect", "avx512_4vnniw": "avx5124vnniw",
	"avx512_4fmaps": "avx5124fmaps", "avx_vnni": "avxvnni", "avx_ifma": "avxifma",
	"avx_vnni_int8": "avxvnniint8", "avx_ne_convert": "avxneconvert",
	"avx_vnni_int16": "avxvnniint16", "amx_tile": "amx-tile", "amx_bf16": "amx-bf16",
	"amx_int8": "amx-int8", "amx_fp16": "amx-fp16", "amx_complex": "amx-complex",
	"user_shstk": "shstk",
}

var x86Implies = map[string][]string{
	"sse2": {"sse"}, "sse3": {"sse2"}, "ssse3": {"sse3"}, "sse4.1": {"ssse3"},
	"sse4.2": {"sse4.1"}, "avx": {"sse4.2"}, "avx2": {"avx"}, "fma": {"avx"},
	"f16c": {"avx"}, "avx512f": {"avx2", "fma", "f16c"},
	"avx512bw": {"avx512f"}, "avx512cd": {"avx512f"}, "avx512dq": {"avx512f"},
	"avx512vl": {"avx512f"}, "avx512ifma": {"avx512f"}, "avx512vnni": {"avx512f"},
	"avx512vpopcntdq": {"avx512f"}, "avx512er": {"avx512f"}, "avx512pf": {"avx512f"},
	"avx5124vnniw": {"avx512f"}, "avx5124fmaps": {"avx512f"},
	"avx512vp2intersect": {"avx512f"}, "avx512vbmi": {"avx512bw"},
	"avx512vbmi2": {"avx512bw"}, "avx512bitalg": {"avx512bw"},
	"avx512bf16": {"avx512bw"}, "avx512fp16": {"avx512bw"},
	"aes": {"sse2"}, "pclmul": {"sse2"}, "sha": {"sse2"}, "gfni": {"sse2"},
	"vaes": {"aes", "avx"}, "vpclmulqdq": {"pclmul", "avx"},
	"sha512": {"avx2"}, "sm3": {"avx"}, "sm4": {"avx2"},
	"avxvnni": {"avx2"}, "avxifma": {"avx2"}, "avxvnniint8": {"avx2"},
	"avxneconvert": {"avx2"}, "avxvnniint16": {"avx2"},
	"amx-bf16": {"amx-tile"}, "amx-int8": {"amx-tile"}, "amx-fp16": {"amx-tile"},
	"amx-complex": {"amx-tile"}, "xsaveopt": {"xsave"}, "xsavec": {"xsave"},
	"xsaves": {"xsave"}, "sse4a": {"sse3"}, "fma4": {"avx", "sse4a"}, "xop": {"fma4"},
}

var x86 = newFamily("x86", x86Names, x86Implies, x86Aliases)

// x86Levels[n] is the feature set of x86-64-v<n> (index 0 unused), per the
// psABI and glibc's get-isa-level.h (testdata/x86_levels.txt).
var x86Levels = [5]ExtSet{
	{},
	x86.close(x86.mustSet("x87", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2")),
	x86.close(x86.mustSet("x87", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2",
		"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf")),
	x86.close(x86.mustSet("x87", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2",
		"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf",
		"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")),
	x86.close(x86.mustSet("x87", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2",
		"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf",
		"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
		"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
}

// X86Level is the highest x86-64 psABI level (1..4) whose features the set
// holds, 0 if not even the baseline (or not amd64).
func X86Level(i ISA) int {
	if i.Arch != AMD64 {
		return 0
	}
	return x86Level(i.Exts)
}

func x86Level(s ExtSet) int {
	for n := 4; n >= 1; n-- {
		if x86Levels[n].subsetOf(s) {
			return n
		}
	}
	return 0
}

// ParseX86Flags builds an amd64 ISA from /proc/cpuinfo "flags" tokens. Flags
// that are not ISA features (vme, tsc, constant_tsc, ...) are ignored; kernel
// spellings (pni, abm, lahf_lm, avx512_vnni, ...) are mapped to the GCC/LLVM
// names. The x86-64 baseline (v1) is always present: every CPU that runs an
// amd64 kernel has it.
func ParseX86Flags(flags []string) ISA {
	s := x86Levels[1]
	for _, f := range flags {
		if i, ok := x86.lookup(strings.ToLower(strings.TrimSpace(f))); ok {
			s.set(i)
		}
	}
	return ISA{Arch: AMD64, Exts: x86.close(s)}
}

const x86Hint = "accepted: x86-64, x86-64-v2, x86-64-v3, x86-64-v4, amd64 or x86_64, each optionally followed by +feature (e.g. x86-64-v2+avx512vnni)"

// parseX86 parses "x86-64[-vN][+feature...]".
func parseX86(in, s string) (ISA, error) {
	base, feats, hasFeats := strings.Cut(s, "+")
	level := 0
	switch base {
	case "x86-64", "amd64", "x86_64", "x86-64-v1", "amd64-v1":
		level = 1
	default:
		for _, p := range []string{"x86-64-v", "x86_64-v", "amd64-v"} {
			if n, ok := strings.CutPrefix(base, p); ok {
				if v, err := strconv.Atoi(n); err == nil && v >= 1 && v <= 4 {
					level = v
				}
			}
		}
	}
	if level == 0 {
		return ISA{}, &ParseError{Input: in, Err: fmt.Errorf("unknown x86-64 level %q", base), Hint: archHint(base, x86Hint)}
	}
	set := x86Levels[level]
	if hasFeats {
		var err error
		if set, err = x86.addFeatures(in, "x86-64", set, feats); err != nil {
			return ISA{}, err
		}
	}
	return ISA{Arch: AMD64, Exts: set}, nil
}

func x86String(s ExtSet) string {
	lvl := x86Level(s)
	var b strings.Builder
	b.WriteString("x86-64")
	if lvl > 1 {
		fmt.Fprintf(&b, "-v%d", lvl)
	}
	for _, n := range x86.list(s.andNot(x86Levels[lvl])) {
		b.WriteByte('+')
		b.WriteString(n)
	}
	return b.String()
}
