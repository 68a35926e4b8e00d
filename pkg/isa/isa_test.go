package isa_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		arch isa.Arch
		want string // Short()
	}{
		{"rv64gc", isa.RISCV64, "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd"},
		{"RV64IMFDV", isa.RISCV64, "rv64imfdv_zicsr_zmmul_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b"},
		{" rv64imfd ", isa.RISCV64, "rv64imfd_zicsr_zmmul"},
		{"rv32e", isa.RISCV32, "rv32e"},
		{"rv32imac", isa.RISCV32, "rv32imac_zmmul_zaamo_zalrsc_zca"},
		{"rv64gcv_zba_zbb_zbs", isa.RISCV64, "rv64imafdcbv_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zba_zbb_zbs_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b"},
		{"rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0", isa.RISCV64, "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd"},
		{"rv64gcb", isa.RISCV64, "rv64imafdcb_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zba_zbb_zbs"},
		{"rvi20u64", isa.RISCV64, "rv64i"},
		{"rva23u64_zvbc", isa.RISCV64, "rv64imafdcbv_zic64b_zicbom_zicbop_zicboz_ziccamoa_ziccif_zicclsm_ziccrse_zicntr_zicond_zicsr_zihintntl_zihintpause_zihpm_zimop_zmmul_za64rs_zaamo_zalrsc_zawrs_zfa_zfhmin_zca_zcb_zcd_zcmop_zba_zbb_zbs_zkt_zvbb_zvbc_zve32f_zve32x_zve64d_zve64f_zve64x_zvfhmin_zvkb_zvkt_zvl128b_zvl32b_zvl64b_supm"},
		{"rv64gc_xtheadvector", isa.RISCV64, "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_xtheadvector"},
		{"rv64i_zibi0p1", isa.RISCV64, "rv64i_zibi0p1"},
		{"rv64y0p98m", isa.RISCV64, "rv64y0p98m_zmmul"},
		{"x86-64", isa.AMD64, "x86-64"},
		{"AMD64", isa.AMD64, "x86-64"},
		{"x86_64", isa.AMD64, "x86-64"},
		{"x86-64-v1", isa.AMD64, "x86-64"},
		{"x86-64-v3", isa.AMD64, "x86-64-v3"},
		{"x86-64-v2+avx512vnni", isa.AMD64, "x86-64-v2+avx+avx2+f16c+fma+avx512f+avx512vnni"},
		{"x86-64-v3+avx512_vnni", isa.AMD64, "x86-64-v3+avx512f+avx512vnni"},
		{"x86-64+pni+abm+lahf_lm", isa.AMD64, "x86-64+sse3+sahf+lzcnt"},
		{"x86-64-v4+amx-tile", isa.AMD64, "x86-64-v4+amx-tile"},
		{"arm64", isa.ARM64, "arm64"},
		{"riscv64", isa.RISCV64, "rv64i"},
		{"RISCV64", isa.RISCV64, "rv64i"},
		{" Riscv64 ", isa.RISCV64, "rv64i"},
		{"riscv32", isa.RISCV32, "rv32i"},
		{"aarch64+sve2", isa.ARM64, "arm64+sve+sve2"},
		{"arm64+lse+crc", isa.ARM64, "arm64+crc32+atomics"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := isa.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Arch != tc.arch {
				t.Errorf("arch %s, want %s", got.Arch, tc.arch)
			}
			if diff := cmp.Diff(tc.want, got.Short()); diff != "" {
				t.Errorf("Short (-want +got):\n%s", diff)
			}
			for _, s := range []string{got.Short(), got.String()} {
				if strings.Contains(s, "y0p98") {
					continue // LLVM's own toString of the CHERI base does not parse back
				}
				if back := mustParse(t, s); back.Exts != got.Exts || back.Arch != got.Arch {
					t.Errorf("%q parses back to %s", s, back.Short())
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in    string
		token string // the error must name it
	}{
		{"rv64gcx", "'x'"},
		{"rv64gc_zbx", "did you mean zba or zbb or zbc?"},
		{"x86-64-v3+avx512vnn", "did you mean avx512vnni"},
		{"arm64+sve3", "did you mean sve or sve2"},
		{"rv64gc_zmadeup", "'zmadeup'"},
		{"rv64gc_xmadeup", "'xmadeup'"},
		{"rv64gc_zba_zba", "duplicated"},
		{"rv64imafdcv_zicsr_zifencei_zbb_zbc_zvl512b_zvl9b", "'zvl9b'"},
		{"rv64gc_", "'_'"},
		{"rv64", "rv32{i,e,g,y}"},
		{"rv64k", "'rv64'"},
		{"rv128gc", "rv32{i,e,g,y}"},
		{"rv64i1p0", "1.0"},
		{"rv64izibi", "`zibi`"},
		{"rv64gc_zfinx", "'zfinx'"},
		{"rv64gc_zcf", "'zcf'"},
		{"rv64gcv_xtheadvector", "'xtheadvector'"},
		{"rva23u64zvbc", "separator '_'"},
		{"rv64-gc", "[a-z0-9_]"},
		{"x86-64-v5", `"x86-64-v5"`},
		{"x86-64-v3+avx513", `"avx513"`},
		{"x86-64-v3+", `""`},
		{"amd64+sse4_3", `"sse4_3"`},
		{"arm64+sve3", `"sve3"`},
		{"aarch64+", `""`},
		{"arm64+crc+", `""`},
		{"arm64v8", `"arm64v8"`},
		{"mips64", `"mips64"`},
		{"", "empty"},
		{"   ", "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := isa.Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want error", tc.in, got)
			}
			var pe *isa.ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.token) {
				t.Errorf("error %q does not name %s", msg, tc.token)
			}
			if !strings.Contains(msg, "accepted") {
				t.Errorf("error %q does not say what is accepted", msg)
			}
		})
	}
}

// TestParseArchSpellings: spellings users write for an architecture that
// Parse does not take get a "did you mean" naming what it does take.
func TestParseArchSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want string // the hint starts with it
	}{
		{"x86", "did you mean x86-64 or amd64?"},
		{"X64", "did you mean x86-64 or amd64?"},
		{"x64+avx2", "did you mean x86-64 or amd64?"},
		{"x86-64v3", "did you mean x86-64-v3?"},
		{"amd64v2", "did you mean x86-64-v2?"},
		{"amd46", "did you mean amd64?"},
		{"i386", "did you mean amd64? isamatch models 64-bit x86 only"},
		{"i686", "did you mean amd64? isamatch models 64-bit x86 only"},
		{"arm", "did you mean arm64? isamatch models 64-bit arm only"},
		{"aarch32", "did you mean arm64? isamatch models 64-bit arm only"},
		{"armhf", "did you mean arm64? isamatch models 64-bit arm only"},
		{"armv7l", "did you mean arm64? isamatch models 64-bit arm only"},
		{"armv8", "did you mean arm64? arm64 requests name features"},
		{"arm64v8", "did you mean arm64? arm64 requests name features"},
		{"ARMv8.2-A", "did you mean arm64+crc32+atomics+asimdrdm+dcpop?"},
		{"arm64/v8.1", "did you mean arm64+crc32+atomics+asimdrdm?"},
		{"riscv", "did you mean riscv64 or rv64i or rv64gc?"},
		{"RISC-V", "did you mean riscv64 or rv64i or rv64gc?"},
		{"rv64", "did you mean riscv64 or rv64i or rv64gc?"},
		{"rv32", "did you mean riscv32 or rv32i or rv32gc?"},
		{"riscv64gc", "did you mean rv64gc?"},
		{"RISCV64IMAFDC", "did you mean rv64imafdc?"},
		{"riscv64+zba+zbb", "did you mean rv64i_zba_zbb?"},
		{"riscv64+zba+bogus", "RISC-V extensions follow an ISA string after '_'"},
		{"mips64", "accepted:"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := isa.Parse(tc.in)
			var pe *isa.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %s, %v; want a *ParseError", tc.in, got, err)
			}
			if !strings.HasPrefix(pe.Hint, tc.want) {
				t.Errorf("hint %q does not start with %q", pe.Hint, tc.want)
			}
			// Every suggestion parses.
			if rest, ok := strings.CutPrefix(pe.Hint, "did you mean "); ok {
				list, _, _ := strings.Cut(rest, "?")
				for _, s := range strings.Split(list, " or ") {
					if _, err := isa.Parse(s); err != nil {
						t.Errorf("suggestion %q does not parse: %v", s, err)
					}
				}
			}
		})
	}
}

func TestParseRISCVIsLLVMExact(t *testing.T) {
	if _, err := isa.ParseRISCV("RV64GC"); err == nil {
		t.Error("ParseRISCV accepted upper case; LLVM rejects it")
	}
	got, err := isa.ParseRISCV("rv64i_zba_zbb_zbs")
	if err != nil {
		t.Fatal(err)
	}
	if has(got, "b") {
		t.Error("ParseRISCV combined zba+zbb+zbs into b; LLVM does not")
	}
	if p := mustParse(t, "rv64i_zba_zbb_zbs"); !has(p, "b") {
		t.Error("Parse did not combine zba+zbb+zbs into b")
	}
}

func TestParseRequest(t *testing.T) {
	r, err := isa.ParseRequest("rv64gcv | x86-64-v3|arm64+sve")
	if err != nil {
		t.Fatal(err)
	}
	want := []isa.Arch{isa.RISCV64, isa.AMD64, isa.ARM64}
	var got []isa.Arch
	for _, a := range r.Alternatives {
		got = append(got, a.Arch)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arches (-want +got):\n%s", diff)
	}
	if r.String() != "rv64imafdcv_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b | x86-64-v3 | arm64+sve" {
		t.Errorf("String = %q", r.String())
	}
	for _, bad := range []string{"", "rv64gc |", "| x86-64", "rv64gc || arm64", "rv64gc | arm65"} {
		if _, err := isa.ParseRequest(bad); err == nil {
			t.Errorf("ParseRequest(%q) succeeded", bad)
		}
	}
}

func TestSatisfiesAndMissing(t *testing.T) {
	tests := []struct {
		node, req string
		want      bool
		missing   []string
	}{
		{"rv64imafdcv", "rv64gc", false, []string{"zifencei"}},
		{"rv64gcv", "rv64gc", true, []string{}},
		{"rv64gc", "rv64gcv", false, []string{"v", "zve32f", "zve32x", "zve64d", "zve64f", "zve64x", "zvl128b", "zvl32b", "zvl64b"}},
		{"rv64gc", "rv32gc", false, []string{"arch:riscv32"}},
		{"rv32imac", "rv32i", true, []string{}},
		{"rv64gc", "x86-64", false, []string{"arch:amd64"}},
		{"x86-64-v4", "x86-64-v3", true, []string{}},
		{"x86-64-v3", "x86-64-v4", false, []string{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
		{"arm64+sve2", "arm64+sve", true, []string{}},
		{"rv64gc_zba_zbb_zbs_zicntr_zihpm", "rva20u64", true, []string{}}, // ziccif & co are unobservable
	}
	for _, tc := range tests {
		t.Run(tc.node+" ⊇ "+tc.req, func(t *testing.T) {
			node, req := mustParse(t, tc.node), mustParse(t, tc.req)
			if got := isa.Satisfies(node, req); got != tc.want {
				t.Errorf("Satisfies = %t, want %t", got, tc.want)
			}
			got := isa.Missing(node, req)
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.missing, got); diff != "" {
				t.Errorf("Missing (-want +got):\n%s", diff)
			}
		})
	}
	if isa.Satisfies(isa.ISA{}, isa.ISA{}) {
		t.Error("zero ISAs satisfy each other")
	}
}

func TestBeyond(t *testing.T) {
	tests := []struct {
		node, req string
		want      []string
	}{
		{"rv64gcv", "rv64gc", []string{"v"}},
		{"rv64imafdcv", "rv64imfd", []string{"a", "c", "v", "zcd"}}, // zcd comes from c with d: c alone does not imply it
		{"rv64gc_zba_zbb", "rv64gc_zba_zbb", []string{}},
		{"rv64gc", "rv64gcv", []string{}}, // not satisfied: still only what node has more
		{"x86-64-v4", "x86-64-v3", []string{"avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
		{"arm64+sve2", "arm64", []string{"sve2"}},
		{"rv64gc", "x86-64", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.node+" beyond "+tc.req, func(t *testing.T) {
			got := isa.Beyond(mustParse(t, tc.node), mustParse(t, tc.req))
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Beyond (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAffinityPaperExample: a request for RV64IMFD prefers an IMFD node to an
// IMFDV node (the paper's example).
func TestAffinityPaperExample(t *testing.T) {
	req := mustParse(t, "RV64IMFD")
	imfd, imfdv, gc := mustParse(t, "RV64IMFD"), mustParse(t, "RV64IMFDV"), mustParse(t, "rv64gc")
	if a := isa.Affinity(imfd, req); a != 1 {
		t.Errorf("Affinity(IMFD) = %v, want 1", a)
	}
	a := isa.Affinity(imfdv, req)
	if a <= 0 || a >= 1 {
		t.Errorf("Affinity(IMFDV) = %v, want in (0,1)", a)
	}
	if want := float64(imfd.Len()) / float64(imfdv.Len()); a != want {
		t.Errorf("Affinity(IMFDV) = %v, want |req|/|node| = %v", a, want)
	}
	if a := isa.Affinity(mustParse(t, "rv64imafd"), mustParse(t, "rv64imafdv")); a != 0 {
		t.Errorf("Affinity of a node that does not satisfy = %v, want 0", a)
	}
	if a, b := isa.Affinity(gc, req), isa.Affinity(imfdv, req); a <= 0 || a >= 1 || a <= b {
		t.Errorf("Affinity(rv64gc) = %v, want in (Affinity(IMFDV) = %v, 1)", a, b)
	}
	// Unobservable extensions count on neither side: a real RVA23 board is a
	// perfect fit for rva23u64 minus what it adds.
	p := mustParse(t, "rva23u64")
	if a := isa.Affinity(p, p); a != 1 {
		t.Errorf("Affinity(rva23u64, itself) = %v, want 1", a)
	}
}

func TestIntersectUnion(t *testing.T) {
	a, b := mustParse(t, "rv64imac"), mustParse(t, "rv64imafd")
	in, err := isa.Intersect(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("rv64ima_zmmul_zaamo_zalrsc", in.Short()); diff != "" {
		t.Errorf("Intersect (-want +got):\n%s", diff)
	}
	un, err := isa.Union(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// c and d together also give zcd (LLVM's C+D rule), so the union is closed.
	if diff := cmp.Diff("rv64imafdc_zicsr_zmmul_zaamo_zalrsc_zca_zcd", un.Short()); diff != "" {
		t.Errorf("Union (-want +got):\n%s", diff)
	}
	if _, err := isa.Union(a, mustParse(t, "x86-64")); err == nil {
		t.Error("Union of riscv64 and amd64 succeeded")
	}
	x, _ := isa.Intersect(mustParse(t, "x86-64-v3+aes"), mustParse(t, "x86-64-v4"))
	if x.Short() != "x86-64-v3" {
		t.Errorf("x86 Intersect = %s", x.Short())
	}
	u1 := isa.ISA{Arch: isa.ARM64, Unknown: []string{"b", "a"}}
	u2 := isa.ISA{Arch: isa.ARM64, Unknown: []string{"c", "a"}}
	u, _ := isa.Union(u1, u2)
	if diff := cmp.Diff([]string{"a", "b", "c"}, u.Unknown); diff != "" {
		t.Errorf("Union Unknown (-want +got):\n%s", diff)
	}
}

func TestAccessors(t *testing.T) {
	i := mustParse(t, "rv64imac")
	if diff := cmp.Diff([]string{"i", "m", "a", "c", "zmmul", "zaamo", "zalrsc", "zca"}, i.Extensions()); diff != "" {
		t.Errorf("Extensions (-want +got):\n%s", diff)
	}
	if i.Len() != 8 || i.XLEN() != 64 {
		t.Errorf("Len %d XLEN %d, want 8 64", i.Len(), i.XLEN())
	}
	if (isa.ISA{}).String() != "" || (isa.ISA{}).Extensions() != nil || (isa.ISA{}).Len() != 0 {
		t.Error("zero ISA is not empty")
	}
	if got := mustParse(t, "rv32gc").XLEN(); got != 32 {
		t.Errorf("XLEN(rv32gc) = %d", got)
	}
}
