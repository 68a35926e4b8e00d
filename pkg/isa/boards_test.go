package isa_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// cpuinfoBlock is one capture of testdata/cpuinfo_samples.txt.
type cpuinfoBlock struct {
	title string
	isas  []string // every "isa" / "hart isa" value in the block
	hints isa.Hints
}

func readCPUInfoSamples(t testing.TB) []cpuinfoBlock {
	t.Helper()
	f, err := os.Open("testdata/cpuinfo_samples.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cpuinfoBlock
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if title, ok := strings.CutPrefix(line, "=== "); ok {
			out = append(out, cpuinfoBlock{title: title})
			continue
		}
		if len(out) == 0 || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		b := &out[len(out)-1]
		switch key {
		case "isa", "hart isa":
			if strings.HasPrefix(fields[0], "rv") {
				b.isas = append(b.isas, fields[0])
			}
		case "mvendorid":
			b.hints.MVendorID = fields[0]
		case "marchid":
			b.hints.MArchID = fields[0]
		case "uarch":
			b.hints.UArch = fields[0]
		case "cpu-vector":
			b.hints.VectorVersion = fields[0]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// knownUnknown are the only tokens of the captures that are not extensions:
// K510's vendor "xv5-0p0", SpacemiT's "ime", and two captures the report
// authors truncated ("..._zba_zt", "..._zvkt_sst").
var knownUnknown = []string{"ime", "sst", "xv5-0p0", "zt"}

// TestCPUInfoSamples parses every isa line of every capture: all must parse,
// have a base, and leave nothing unexplained in Unknown.
func TestCPUInfoSamples(t *testing.T) {
	blocks := readCPUInfoSamples(t)
	lines := 0
	for _, b := range blocks {
		for _, line := range b.isas {
			lines++
			t.Run(b.title+"/"+line, func(t *testing.T) {
				got, err := isa.ParseCPUInfoRISCV(line, b.hints)
				if err != nil {
					t.Fatalf("ParseCPUInfoRISCV(%q): %v", line, err)
				}
				if got.Arch != isa.RISCV64 || !has(got, "i") || !has(got, "zicsr") {
					t.Errorf("%q -> %s: want riscv64 with i and zicsr", line, got.Short())
				}
				for _, u := range got.Unknown {
					if !slices.Contains(knownUnknown, u) {
						t.Errorf("%q: unexplained unknown token %q", line, u)
					}
				}
				if has(got, "v") && has(got, "xtheadvector") {
					t.Errorf("%q: both v and xtheadvector", line)
				}
				// Normalising twice equals normalising once.
				again, err := isa.ParseCPUInfoRISCV(got.Short(), isa.Hints{})
				if err != nil || again.Exts != got.Exts {
					t.Errorf("re-parse of %q = %s, %v; want %s", got.Short(), again.Short(), err, got.Short())
				}
			})
		}
	}
	if lines < 60 {
		t.Errorf("only %d isa lines read from the samples", lines)
	}
}

// has reports whether ext is in i's closed extension set.
func has(i isa.ISA, ext string) bool { return slices.Contains(i.Extensions(), ext) }

func mustParse(t testing.TB, s string) isa.ISA {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return i
}

// TestRealBoards checks what real boards and kernels print (all lines from
// testdata/cpuinfo_samples.txt) against what they must and must not run.
func TestRealBoards(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		hints   isa.Hints
		want    string // Short()
		unknown []string
		runs    []string // requests the board satisfies
		notRuns []string // requests it must not satisfy
	}{{
		name:    "VisionFive 2, StarFive vendor 5.15 (single letters only)",
		line:    "rv64imafdc",
		hints:   isa.Hints{UArch: "sifive,u74-mc"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd",
		runs:    []string{"rv64gc", "rv64imafdc", "RV64IMFD", "rv64gc_zicntr", "rva20u64"},
		notRuns: []string{"rv64gc_zba", "rv64gcv", "rva22u64", "rv32gc", "rv64gc_zihpm"},
	}, {
		name:    "VisionFive 2, Arch 6.6.32",
		line:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb",
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd_zba_zbb",
		runs:    []string{"rv64gc_zba_zbb", "rva20u64"},
		notRuns: []string{"rva22u64", "rv64gcb"},
	}, {
		name: "VisionFive 2, Guix 6.13.9 (6.11+: zca zcd printed)",
		line: "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd_zba_zbb",
		want: "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd_zba_zbb",
		runs: []string{"rv64gc_zba_zbb", "rva20u64"},
	}, {
		name: "Milk-V Mars, openSUSE 6.15 (zaamo zalrsc printed)",
		line: "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zaamo_zalrsc_zca_zcd_zba_zbb",
		want: "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd_zba_zbb",
	}, {
		name:    "SpacemiT K1 (BPI-F3), Bianbu 6.6.63 with vendor word ime",
		line:    "rv64imafdcv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_sscofpmf_sstc_svinval_svnapot_svpbmt_ime",
		hints:   isa.Hints{MVendorID: "0x710", MArchID: "0x8000000058000001", UArch: "spacemit,x60"},
		want:    "rv64imafdcbv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zmmul_zaamo_zalrsc_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbkc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_zvl128b_zvl32b_zvl64b_sscofpmf_sstc_svinval_svnapot_svpbmt",
		unknown: []string{"ime"},
		runs:    []string{"rv64gcv", "RV64IMFDV", "rv64gcv_zba_zbb_zbs", "rv64gcb", "rv64gcv_zvfh"},
		notRuns: []string{"rva22u64", "rva23u64", "rv64gcv_zvbb"},
	}, {
		name:  "SpacemiT K1, legacy 6.1 kernel (s* before z*, no zicntr printed)",
		line:  "rv64imafdcv_sscofpmf_sstc_svpbmt_zicbom_zicboz_zicbop_zihintpause",
		hints: isa.Hints{MVendorID: "0x710", MArchID: "0x8000000058000001"},
		want:  "rv64imafdcv_zicbom_zicbop_zicboz_zicntr_zicsr_zifencei_zihintpause_zmmul_zaamo_zalrsc_zca_zcd_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b_sscofpmf_sstc_svpbmt",
		runs:  []string{"rv64gcv", "rv64gcv_zicbom_zicbop"},
	}, {
		name:    "TH1520 (Lichee Pi 4A), RevyOS 6.6.66: xtheadvector",
		line:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_xtheadvector",
		hints:   isa.Hints{MVendorID: "0x5b7", MArchID: "0x0", UArch: "thead,c910"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd_xtheadvector",
		runs:    []string{"rv64gc", "rv64gc_xtheadvector"},
		notRuns: []string{"rv64gcv", "rv64gc_zve32x", "rv64gc_zvl128b_zve64d"},
	}, {
		name:    "TH1520, vendor 5.10 kernel: bare v with cpu-vector 0.7.1",
		line:    "rv64imafdcvsu",
		hints:   isa.Hints{VectorVersion: "0.7.1"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_xtheadvector",
		runs:    []string{"rv64gc_xtheadvector"},
		notRuns: []string{"rv64gcv", "rv64imafdcv"},
	}, {
		name:    "SG2042 (Milk-V Pioneer), vendor 6.1.55: bare v on T-Head C920",
		line:    "rv64imafdcv",
		hints:   isa.Hints{MVendorID: "0x5b7", MArchID: "0x0"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_xtheadvector",
		notRuns: []string{"rv64gcv"},
	}, {
		name:    "Allwinner D1 (C906), Ubuntu 6.8: T-Head without vector",
		line:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm",
		hints:   isa.Hints{MVendorID: "0x5b7", MArchID: "0x0", UArch: "thead,c906"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd",
		notRuns: []string{"rv64gc_xtheadvector", "rv64gcv"},
	}, {
		name:    "HiFive Unmatched, Debian 6.12",
		line:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd",
		hints:   isa.Hints{MVendorID: "0x489", MArchID: "0x8000000000000007", UArch: "sifive,bullet0"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zmmul_zaamo_zalrsc_zca_zcd",
		runs:    []string{"rv64gc", "rvi20u64", "rva20u64", "rv64imac"},
		notRuns: []string{"rv64gc_zba", "rva22u64"},
	}, {
		name:    "QEMU virt, newer QEMU (h, zawrs, svadu)",
		line:    "rv64imafdch_zicbom_zicboz_zicntr_zicsr_zifencei_zihintpause_zihpm_zawrs_zfa_zca_zcd_zba_zbb_zbc_zbs_sstc_svadu",
		want:    "rv64imafdcbh_zicbom_zicboz_zicntr_zicsr_zifencei_zihintpause_zihpm_zmmul_zaamo_zalrsc_zawrs_zfa_zca_zcd_zba_zbb_zbc_zbkc_zbs_sstc_svadu",
		runs:    []string{"rv64gch", "rv64gcb_zbc"},
		notRuns: []string{"rva22u64", "rv64gcv"},
	}, {
		name:    "QEMU virt with rva22u64=true",
		line:    "rv64imafdch_zicbom_zicboz_zicntr_zicsr_zifencei_zihintntl_zihintpause_zihpm_zawrs_zfa_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_sstc_svadu",
		want:    "rv64imafdcbh_zicbom_zicboz_zicntr_zicsr_zifencei_zihintntl_zihintpause_zihpm_zmmul_zaamo_zalrsc_zawrs_zfa_zfhmin_zca_zcd_zba_zbb_zbc_zbkc_zbs_zkt_sstc_svadu",
		notRuns: []string{"rva22u64"}, // QEMU does not report zicbop
	}, {
		name:    "Milk-V Duo, vendor 5.10 without vendor hints: v is taken at face value",
		line:    "rv64imafdvcsu",
		want:    "rv64imafdcv_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b",
		runs:    []string{"rv64gcv"},
		notRuns: []string{"rv64gc_xtheadvector"},
	}, {
		name:    "Milk-V Duo, vendor 5.10 with the probe's T-Head hint",
		line:    "rv64imafdvcsu",
		hints:   isa.Hints{UArch: "thead,c906", MVendorID: "0x5b7"},
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_xtheadvector",
		runs:    []string{"rv64gc_xtheadvector"},
		notRuns: []string{"rv64gcv"},
	}, {
		name:    "Kendryte K510, 4.17: versions and vendor xv5-0p0",
		line:    "rv64i2p0m2p0a2p0f2p0d2p0c2p0xv5-0p0",
		want:    "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd",
		unknown: []string{"xv5-0p0"},
		runs:    []string{"rv64gc"},
	}, {
		name: "SpacemiT X100 (RVA23 class): matches rva23u64 although the kernel never prints the unobservable extensions",
		line: "rv64imafdcvh_zicbom_zicbop_zicboz_zicntr_zicond_zicsr_zifencei_zihintntl_zihintpause_zihpm_zimop_zaamo_zalrsc_zawrs_zfa_zfbfmin_zfh_zfhmin_zca_zcb_zcd_zcmop_zba_zbb_zbc_zbs_zkt_zvbb_zvbc_zve32f_zve32x_zve64d_zve64f_zve64x_zvfbfmin_zvfbfwma_zvfh_zvfhmin_zvkb_zvkg_zvkned_zvknha_zvknhb_zvksed_zvksh_zvkt_smaia_smstateen_ssaia_sscofpmf_ssnpm_sstc_svade_svinval_svnapot_svpbmt_sdtrig",
		want: "rv64imafdcbvh_zicbom_zicbop_zicboz_zicntr_zicond_zicsr_zifencei_zihintntl_zihintpause_zihpm_zimop_zmmul_zaamo_zalrsc_zawrs_zfa_zfbfmin_zfh_zfhmin_zca_zcb_zcd_zcmop_zba_zbb_zbc_zbkc_zbs_zkt_zvbb_zvbc_zve32f_zve32x_zve64d_zve64f_zve64x_zvfbfmin_zvfbfwma_zvfh_zvfhmin_zvkb_zvkg_zvkn_zvknc_zvkned_zvkng_zvknha_zvknhb_zvks_zvksc_zvksed_zvksg_zvksh_zvkt_zvl128b_zvl32b_zvl64b_sdtrig_smaia_smstateen_ssaia_sscofpmf_ssnpm_sstc_svade_svinval_svnapot_svpbmt",
		runs: []string{"rva23u64", "rva22u64", "rva20u64", "rvb23u64", "rva23u64_zvbc", "rv64gcv_zvkng_zvksg"},
		notRuns: []string{
			"rva23s64",      // needs privileged extensions the kernel does not show
			"rv64gc_ziccid", // observable cache coherence extension, not printed
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := isa.ParseCPUInfoRISCV(tc.line, tc.hints)
			if err != nil {
				t.Fatalf("ParseCPUInfoRISCV(%q): %v", tc.line, err)
			}
			if diff := cmp.Diff(tc.want, got.Short()); diff != "" {
				t.Errorf("Short (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknown, got.Unknown); diff != "" {
				t.Errorf("Unknown (-want +got):\n%s", diff)
			}
			for _, r := range tc.runs {
				if req := mustParse(t, r); !isa.Satisfies(got, req) {
					t.Errorf("%s does not satisfy %q; missing %v", got.Short(), r, isa.Missing(got, req))
				}
			}
			for _, r := range tc.notRuns {
				if req := mustParse(t, r); isa.Satisfies(got, req) {
					t.Errorf("%s satisfies %q, want not", got.Short(), r)
				}
			}
		})
	}
}

// TestKernelDriftSameSet: the same VisionFive 2 seen through four kernel
// generations gives one extension set once the kernel prints multi-letter
// extensions.
func TestKernelDriftSameSet(t *testing.T) {
	lines := []string{
		"rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb",
		"rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd_zba_zbb",
		"rv64imafdc_zicntr_zicsr_zifencei_zihpm_zaamo_zalrsc_zca_zcd_zba_zbb",
		"rv64imafdc_zihpm_zicntr_zicsr_zifencei_zbb_zba_zcd_zca", // out of order
	}
	first, err := isa.ParseCPUInfoRISCV(lines[0], isa.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		got, err := isa.ParseCPUInfoRISCV(l, isa.Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first.Extensions(), got.Extensions()); diff != "" {
			t.Errorf("%q (-first +got):\n%s", l, diff)
		}
		if isa.GroupID(got) != isa.GroupID(first) {
			t.Errorf("%q: group %s, want %s", l, isa.GroupID(got), isa.GroupID(first))
		}
	}
}

func TestCPUInfoTolerance(t *testing.T) {
	tests := []struct {
		name, line string
		want       string
		unknown    []string
	}{
		{"misa s and u dropped", "rv64imafdcsu", "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd", nil},
		{"letters out of order", "rv64imafdvcsu", "rv64imafdcv_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b", nil},
		{"duplicated tokens", "rv64imafdc_zba_zba_zicsr_zicsr_zicntr_zifencei", "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zba", nil},
		{"upper case and spaces", "  RV64IMAFDC_ZICSR_ZIFENCEI_ZICNTR \n", "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd", nil},
		{"g shorthand (fastfetch Duo S)", "rv64gvcsu", "rv64imafdcv_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b", nil},
		{"vendor x token", "rv64imafdc_zicntr_zicsr_zifencei_xfoo", "rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd", []string{"xfoo"}},
		{"rv32", "rv32imac_zicntr_zicsr_zifencei", "rv32imac_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca", nil},
		{"rv32 c+f gives zcf", "rv32imafc", "rv32imafc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcf", nil},
		{"empty token and trailing underscore", "rv64imac__zicsr_", "rv64imac_zicsr_zmmul_zaamo_zalrsc_zca", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := isa.ParseCPUInfoRISCV(tc.line, isa.Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Short()); diff != "" {
				t.Errorf("Short (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknown, got.Unknown); diff != "" {
				t.Errorf("Unknown (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"", "x86_64", "rv", "rv64", "rv128i", "rv64_zicsr"} {
		if got, err := isa.ParseCPUInfoRISCV(bad, isa.Hints{}); err == nil {
			t.Errorf("ParseCPUInfoRISCV(%q) = %s, want error", bad, got.Short())
		}
	}
}

// TestTHeadVectorNeverV: xtheadvector must never satisfy a request for the
// ratified vector extension or any of its subsets.
func TestTHeadVectorNeverV(t *testing.T) {
	node, err := isa.ParseCPUInfoRISCV("rv64imafdcv", isa.Hints{MVendorID: "0x5b7", MArchID: "0x0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"rv64gcv", "rv64iv", "rv64i_zve32x", "rv64if_zve32f", "rv64i_zve64x", "rv64i_zvkb", "rva23u64"} {
		req := mustParse(t, r)
		if isa.Satisfies(node, req) {
			t.Errorf("xtheadvector node satisfies %q", r)
		}
	}
	if _, err := isa.Parse("rv64gcv_xtheadvector"); err == nil {
		t.Error("Parse(rv64gcv_xtheadvector) succeeded, want an error: the two vector versions conflict")
	}
	for _, h := range []isa.Hints{
		{MVendorID: "0x5b7", UArch: "thead,c920"},
		{MVendorID: "0x5B7", MArchID: "0"},
		{VectorVersion: "0.7.1"},
	} {
		got, err := isa.ParseCPUInfoRISCV("rv64imafdcv", h)
		if err != nil {
			t.Fatal(err)
		}
		if has(got, "v") || !has(got, "xtheadvector") {
			t.Errorf("hints %+v: %s, want xtheadvector and no v", h, got.Short())
		}
	}
	// A SpacemiT (RVV 1.0) or a T-Head core with a non-zero marchid keeps v.
	for _, h := range []isa.Hints{{MVendorID: "0x710", MArchID: "0x8000000058000001"}, {MVendorID: "0x5b7", MArchID: "0x8000000000000008"}} {
		got, err := isa.ParseCPUInfoRISCV("rv64imafdcv", h)
		if err != nil {
			t.Fatal(err)
		}
		if !has(got, "v") || has(got, "xtheadvector") {
			t.Errorf("hints %+v: %s, want v", h, got.Short())
		}
	}
}

func TestUnobservable(t *testing.T) {
	want := []string{"ziccif", "ziccrse", "ziccamoa", "zicclsm", "za64rs", "za128rs", "zic64b", "ziccamoc", "zama16b", "supm"}
	// Profiles keep them for display, Requirements never ask for them.
	p := mustParse(t, "rva23u64")
	for _, u := range []string{"ziccif", "za64rs", "supm", "zic64b"} {
		if !has(p, u) {
			t.Errorf("rva23u64 lacks %s in its extension list", u)
		}
	}
	for _, r := range isa.Requirements(p, false) {
		for _, u := range want {
			if strings.HasSuffix(r.Key, ".rv."+u) || strings.HasSuffix(r.Key, "/rv."+u) {
				t.Errorf("requirement on unobservable %s", r.Key)
			}
		}
	}
}
