package isa_test

import (
	"bufio"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// readNamedLines reads "name<TAB>value" rows of a fixture (comments skipped).
func readNamedLines(t testing.TB, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s: bad row %q", path, line)
		}
		out[name] = val
	}
	return out
}

// devMachineFlags returns the flags line of the captured /proc/cpuinfo of the
// development machine.
func devMachineFlags(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/cpuinfo_dev_amd64.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			return strings.Fields(v)
		}
	}
	t.Fatal("no flags line in cpuinfo_dev_amd64.txt")
	return nil
}

func TestX86Machines(t *testing.T) {
	lines := readNamedLines(t, "testdata/x86_flags.txt")
	lines["dev-machine (captured)"] = strings.Join(devMachineFlags(t), " ")
	tests := []struct {
		machine string
		level   int
		has     []string
		lacks   []string
		runs    []string
		notRuns []string
	}{
		{"epyc-7763", 3, []string{"sse3", "lzcnt", "sahf", "sha", "vaes", "sse4a", "clzero"}, []string{"avx512f", "vme"},
			[]string{"x86-64-v3", "amd64+aes+sha", "x86_64"}, []string{"x86-64-v4", "x86-64-v2+avx512vnni"}},
		{"xeon-platinum-8380", 4, []string{"avx512vnni", "avx512vbmi2", "gfni", "avx512bitalg"}, []string{"amx-tile", "sse4a"},
			[]string{"x86-64-v4", "x86-64-v2+avx512vnni", "x86-64-v3+vaes+vpclmulqdq"}, []string{"x86-64-v4+amx-tile", "x86-64-v3+sse4a"}},
		{"xeon-platinum-8480", 4, []string{"amx-tile", "amx-bf16", "amx-int8", "avx512fp16", "avxvnni", "serialize"}, nil,
			[]string{"x86-64-v4+amx-tile+amx_int8", "x86-64-v3+avx_vnni"}, []string{"x86-64-v4+avx512vp2intersect"}},
		{"core-i7-2600", 2, []string{"avx", "aes", "pclmul", "xsaveopt"}, []string{"avx2", "bmi", "fma"},
			[]string{"x86-64-v2", "x86-64-v2+avx"}, []string{"x86-64-v3"}},
		{"dev-machine (captured)", 4, []string{"avx512vnni", "avx512ifma", "sha", "prfchw"}, []string{"amx-tile"},
			[]string{"x86-64-v4", "x86-64-v3+avx512vbmi"}, []string{"x86-64-v4+amx-tile"}},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			line, ok := lines[tc.machine]
			if !ok {
				t.Fatalf("no fixture for %s", tc.machine)
			}
			node := isa.ParseX86Flags(strings.Fields(line))
			if got := isa.X86Level(node); got != tc.level {
				t.Errorf("level %d, want %d (%s)", got, tc.level, node)
			}
			for _, h := range tc.has {
				if !has(node, h) {
					t.Errorf("lacks %s", h)
				}
			}
			for _, h := range tc.lacks {
				if has(node, h) {
					t.Errorf("has %s", h)
				}
			}
			for _, r := range tc.runs {
				if req := mustParse(t, r); !isa.Satisfies(node, req) {
					t.Errorf("does not satisfy %q; missing %v", r, isa.Missing(node, req))
				}
			}
			for _, r := range tc.notRuns {
				if isa.Satisfies(node, mustParse(t, r)) {
					t.Errorf("satisfies %q, want not", r)
				}
			}
			for _, e := range node.Extensions() {
				if slices.Contains([]string{"vme", "tsc", "ht", "lm", "constant_tsc", "hypervisor"}, e) {
					t.Errorf("non-ISA flag %s kept", e)
				}
			}
			if back := mustParse(t, node.String()); back.Exts != node.Exts {
				t.Errorf("String %q parses to %q", node.String(), back.String())
			}
		})
	}
}

func TestX86Levels(t *testing.T) {
	v1 := []string{"fpu", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2", "lm", "syscall"}
	v2 := append(slices.Clone(v1), "cx16", "lahf_lm", "popcnt", "pni", "ssse3", "sse4_1", "sse4_2")
	v3 := append(slices.Clone(v2), "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
	v4 := append(slices.Clone(v3), "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
	drop := func(s []string, f string) []string {
		return slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == f })
	}
	tests := []struct {
		name  string
		flags []string
		want  int
	}{
		{"baseline", v1, 1},
		{"nothing (baseline is implicit)", nil, 1},
		{"v2", v2, 2},
		{"v2 without lahf_lm", drop(v2, "lahf_lm"), 1},
		{"v2 without popcnt", drop(v2, "popcnt"), 1},
		{"v2 without pni: ssse3 implies sse3", drop(v2, "pni"), 2},
		{"v3", v3, 3},
		{"v3 without abm (lzcnt)", drop(v3, "abm"), 2},
		{"v3 without xsave", drop(v3, "xsave"), 2},
		{"v3 without movbe", drop(v3, "movbe"), 2},
		{"v4", v4, 4},
		{"v4 without avx512vl (hypervisor masked)", drop(v4, "avx512vl"), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := isa.ParseX86Flags(tc.flags)
			if got := isa.X86Level(node); got != tc.want {
				t.Errorf("level %d, want %d", got, tc.want)
			}
			for lvl, r := range []string{"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"} {
				if got, want := isa.Satisfies(node, mustParse(t, r)), lvl+1 <= tc.want; got != want {
					t.Errorf("Satisfies(%s) = %t, want %t", r, got, want)
				}
			}
		})
	}
}

func TestARM64Machines(t *testing.T) {
	lines := readNamedLines(t, "testdata/arm64_features.txt")
	tests := []struct {
		machine string
		variant string // highest OCI variant it satisfies
		next    string // the next one, which it must not satisfy
		runs    []string
		notRuns []string
	}{
		{"graviton2-neoverse-n1", "v8.2", "v8.3", []string{"arm64+asimddp", "aarch64+lse"}, []string{"arm64+sve"}},
		{"graviton3-neoverse-v1", "v8.4", "v8.5", []string{"arm64+sve", "arm64+i8mm+bf16+svebf16"}, []string{"arm64+sve2", "arm64+sme"}},
		{"graviton4-neoverse-v2", "v9.1", "v9.2", []string{"arm64+sve2", "arm64+svebitperm", "arm64+sve2+i8mm"}, []string{"arm64+sme", "arm64+sve2p1"}},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			node := isa.ParseARM64Features(strings.Fields(lines[tc.machine]))
			if len(node.Unknown) != 0 || has(node, "evtstrm") || has(node, "cpuid") {
				t.Errorf("unexpected tokens: unknown %v", node.Unknown)
			}
			ok, err := isa.FromPlatform("linux", "arm64", tc.variant)
			if err != nil {
				t.Fatal(err)
			}
			if !isa.Satisfies(node, ok) {
				t.Errorf("does not satisfy arm64/%s: missing %v", tc.variant, isa.Missing(node, ok))
			}
			next, err := isa.FromPlatform("linux", "arm64", tc.next)
			if err != nil {
				t.Fatal(err)
			}
			if isa.Satisfies(node, next) {
				t.Errorf("satisfies arm64/%s, want not", tc.next)
			}
			for _, r := range tc.runs {
				if req := mustParse(t, r); !isa.Satisfies(node, req) {
					t.Errorf("does not satisfy %q; missing %v", r, isa.Missing(node, req))
				}
			}
			for _, r := range tc.notRuns {
				if isa.Satisfies(node, mustParse(t, r)) {
					t.Errorf("satisfies %q, want not", r)
				}
			}
			if back := mustParse(t, node.String()); back.Exts != node.Exts {
				t.Errorf("String %q parses to %q", node.String(), back.String())
			}
		})
	}
	if u := isa.ParseARM64Features([]string{"fp", "asimd", "newfeature99"}).Unknown; !slices.Equal(u, []string{"newfeature99"}) {
		t.Errorf("Unknown = %v, want [newfeature99]", u)
	}
}

func TestFromPlatform(t *testing.T) {
	tests := []struct {
		os, arch, variant string
		want              string // Short(), "" for an unsupported platform
	}{
		{"linux", "riscv64", "", "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd"},
		{"linux", "riscv64", "rva20u64", "rv64imafdc_ziccamoa_ziccif_zicclsm_ziccrse_zicntr_zicsr_zmmul_za128rs_zaamo_zalrsc_zca_zcd"},
		{"linux", "riscv64", "rva22u64", "rv64imafdcb_zic64b_zicbom_zicbop_zicboz_ziccamoa_ziccif_zicclsm_ziccrse_zicntr_zicsr_zihintpause_zihpm_zmmul_za64rs_zaamo_zalrsc_zfhmin_zca_zcd_zba_zbb_zbs_zkt"},
		{"linux", "amd64", "", "x86-64"},
		{"linux", "amd64", "v1", "x86-64"},
		{"linux", "amd64", "v3", "x86-64-v3"},
		{"linux", "amd64", "v4", "x86-64-v4"},
		{"linux", "arm64", "", "arm64"},
		{"linux", "arm64", "v8", "arm64"},
		{"linux", "arm64", "v8.2", "arm64+crc32+atomics+asimdrdm+dcpop"},
		{"linux", "arm64", "v9", "arm64+crc32+atomics+asimdrdm+jscvt+fcma+lrcpc+dcpop+asimddp+sve+dit+uscat+ilrcpc+flagm+ssbs+sb+dcpodp+sve2+flagm2+frint"},
		{"linux", "arm", "v7", ""},
		{"linux", "386", "", ""},
		{"linux", "ppc64le", "power9", ""},
		{"linux", "riscv64", "rva99u64", ""},
		{"linux", "amd64", "v5", ""},
		{"linux", "arm64", "v10", ""},
		{"windows", "amd64", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.os+"/"+tc.arch+"/"+tc.variant, func(t *testing.T) {
			got, err := isa.FromPlatform(tc.os, tc.arch, tc.variant)
			if tc.want == "" {
				if !errors.Is(err, isa.ErrUnsupportedPlatform) {
					t.Fatalf("got %v, %v; want ErrUnsupportedPlatform", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Short()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Newer variants include older ones.
	prev, _ := isa.FromPlatform("linux", "arm64", "v8")
	for _, v := range []string{"v8.1", "v8.2", "v8.3", "v8.4", "v8.5", "v8.6", "v8.7", "v8.8", "v8.9"} {
		cur, err := isa.FromPlatform("linux", "arm64", v)
		if err != nil {
			t.Fatal(err)
		}
		if !isa.Satisfies(cur, prev) || isa.Satisfies(prev, cur) {
			t.Errorf("%s is not a strict superset of the previous variant", v)
		}
		prev = cur
	}
	v95, _ := isa.FromPlatform("linux", "arm64", "v9.5")
	v84, _ := isa.FromPlatform("linux", "arm64", "v8.9")
	if !isa.Satisfies(v95, v84) {
		t.Error("v9.5 does not include v8.9")
	}
}

func TestParseGCCMarch(t *testing.T) {
	gcc15 := "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd"
	tests := []struct {
		in      string
		want    string
		unknown []string
	}{
		{"rv64gc", gcc15, nil},
		{"rv64imafdc_zicsr_zifencei", gcc15, nil},
		{"-march=rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd", gcc15, nil},
		{"--with-arch=rv64gc", gcc15, nil},
		{"'rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0'", gcc15, nil},
		{"rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0_zmmul1p0_zaamo1p0_zalrsc1p0_zca1p0_zcd1p0", gcc15, nil},
		{"rv64imafdc", "rv64imafdc_zicsr_zmmul_zaamo_zalrsc_zca_zcd", nil},         // GCC >= 12, ISA spec 20191213
		{"rv64i2p0m2p0a2p0f2p0d2p0c2p0", gcc15, nil},                               // ISA spec 2.2: I contains zicsr and zifencei
		{"rv64imfad_zifencei", "rv64imafd_zicsr_zifencei_zmmul_zaamo_zalrsc", nil}, // any order
		{"rv64gc_xtheadba_xtheadbb_xtheadbs_xtheadcmo_xtheadcondmov_xtheadfmemidx_xtheadfmv_xtheadint_xtheadmac_xtheadmemidx_xtheadmempair_xtheadsync_xtheadvector",
			gcc15 + "_xtheadba_xtheadbb_xtheadbs_xtheadcmo_xtheadcondmov_xtheadfmemidx_xtheadmac_xtheadmemidx_xtheadmempair_xtheadsync_xtheadvector",
			[]string{"xtheadfmv", "xtheadint"}},
		{"rva22u64", "rv64imafdcb_zic64b_zicbom_zicbop_zicboz_ziccamoa_ziccif_zicclsm_ziccrse_zicntr_zicsr_zihintpause_zihpm_zmmul_za64rs_zaamo_zalrsc_zfhmin_zca_zcd_zba_zbb_zbs_zkt", nil},
		{"rv32imac_zicsr", "rv32imac_zicsr_zmmul_zaamo_zalrsc_zca", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := isa.ParseGCCMarch(tc.in)
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
	for _, bad := range []string{"", "skylake", "-march=native", "rv64"} {
		if got, err := isa.ParseGCCMarch(bad); err == nil {
			t.Errorf("ParseGCCMarch(%q) = %s, want error", bad, got.Short())
		}
	}
}

func TestParseRISCVAttribute(t *testing.T) {
	got, err := isa.ParseRISCVAttribute("rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0_zmmul1p0_xfoo1p0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd", got.Short()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"xfoo1p0"}, got.Unknown); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
	if _, err := isa.ParseRISCVAttribute("rv64i_m"); err == nil || !strings.Contains(err.Error(), "lacks version") {
		t.Errorf("ParseRISCVAttribute(rv64i_m) error = %v, want 'lacks version'", err)
	}
}
