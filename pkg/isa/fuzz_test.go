package isa_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Every fuzz target checks: no panic; normalising twice equals normalising
// once; the canonical string parses back to the same set; a node satisfies
// a request for its own ISA; labels round-trip. Seeds come from testdata.

func seedLLVM(f *testing.F) {
	f.Helper()
	for _, c := range readSeedInputs(f) {
		f.Add(c)
	}
}

// readSeedInputs returns the input column of llvm_cases.tsv and the isa
// lines of the cpuinfo captures.
func readSeedInputs(t testing.TB) []string {
	t.Helper()
	var out []string
	out = append(out, readTSVColumn(t, "testdata/llvm_cases.tsv", 2)...)
	for _, b := range readCPUInfoSamples(t) {
		out = append(out, b.isas...)
	}
	return out
}

func readTSVColumn(t testing.TB, path string, col int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if c := strings.Split(l, "\t"); len(c) > col {
			out = append(out, c[col])
		}
	}
	return out
}

// checkNode asserts the properties every parsed ISA must have.
func checkNode(t *testing.T, i isa.ISA, reparse func(string) (isa.ISA, error)) {
	t.Helper()
	if !isa.Satisfies(i, i) {
		t.Fatalf("%s does not satisfy itself", i.Short())
	}
	if a := isa.Affinity(i, i); a != 1 {
		t.Fatalf("Affinity(%s, itself) = %v", i.Short(), a)
	}
	short := i.Short()
	again, err := reparse(short)
	if err != nil {
		t.Fatalf("Short %q does not parse back: %v", short, err)
	}
	if again.Exts != i.Exts || again.Arch != i.Arch {
		t.Fatalf("Short %q parses back to %q", short, again.Short())
	}
	if again.Short() != short {
		t.Fatalf("normalising twice: %q then %q", short, again.Short())
	}
	n, _, ok := isa.NodeFromLabels(isa.NodeLabels(i, nil))
	if !ok || n.Exts != i.Exts || n.Arch != i.Arch {
		t.Fatalf("labels of %s do not round-trip (got %s)", short, n.Short())
	}
	for _, r := range isa.Requirements(i, false) {
		if r.Key == "" {
			t.Fatal("empty requirement key")
		}
	}
}

func FuzzParse(f *testing.F) {
	seedLLVM(f)
	for _, s := range []string{"x86-64-v3+avx512vnni", "amd64", "arm64+sve2", "aarch64+i8mm", "RV64IMFDV", "rva23u64_zvbc", "riscv64", "RISCV32", "x86", "armv8.2-a", "riscv64+zba", "riscv64gc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, err := isa.Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), "accepted") {
				t.Fatalf("error without a hint: %v", err)
			}
			return
		}
		checkNode(t, i, isa.Parse)
		if str := i.String(); !strings.Contains(str, "y0p98") {
			back, err := isa.Parse(str)
			if err != nil || back.Exts != i.Exts {
				t.Fatalf("String %q parses back to %v, %v", str, back.Short(), err)
			}
		}
	})
}

func FuzzParseRISCV(f *testing.F) {
	seedLLVM(f)
	f.Fuzz(func(t *testing.T, s string) {
		i, err := isa.ParseRISCV(s)
		if err != nil {
			return
		}
		if str := i.String(); !strings.Contains(str, "y0p98") {
			back, err := isa.ParseRISCV(str)
			if err != nil || back.Exts != i.Exts {
				t.Fatalf("String %q parses back to %v, %v", str, back.String(), err)
			}
		}
		if !isa.Satisfies(i, i) {
			t.Fatal("does not satisfy itself")
		}
	})
}

var fuzzHints = []isa.Hints{
	{},
	{MVendorID: "0x5b7", MArchID: "0x0", UArch: "thead,c910"},
	{VectorVersion: "0.7.1"},
	{MVendorID: "0x710", MArchID: "0x8000000058000001"},
}

func FuzzParseCPUInfoRISCV(f *testing.F) {
	for _, s := range readSeedInputs(f) {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, s string, h uint8) {
		i, err := isa.ParseCPUInfoRISCV(s, fuzzHints[int(h)%len(fuzzHints)])
		if err != nil {
			return
		}
		checkNode(t, i, func(s string) (isa.ISA, error) { return isa.ParseCPUInfoRISCV(s, isa.Hints{}) })
		if has(i, "v") && fuzzHints[int(h)%len(fuzzHints)].VectorVersion != "" && !strings.Contains(s, "zve") {
			t.Fatalf("T-Head pre-1.0 vector hint kept v in %s", i.Short())
		}
	})
}

func FuzzParseGCCMarch(f *testing.F) {
	seedLLVM(f)
	for _, s := range []string{"-march=rv64gc", "--with-arch=rv64imafdc", "rv64gc_xtheadba_xtheadvector", "'rv64i2p1_m2p0'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, err := isa.ParseGCCMarch(s)
		if err != nil {
			return
		}
		checkNode(t, i, isa.ParseGCCMarch)
	})
}

func FuzzParseRISCVAttribute(f *testing.F) {
	seedLLVM(f)
	f.Fuzz(func(t *testing.T, s string) {
		i, err := isa.ParseRISCVAttribute(s)
		if err != nil {
			return
		}
		back, err := isa.ParseRISCVAttribute(i.String())
		if err != nil || back.Exts != i.Exts {
			t.Fatalf("String %q parses back to %v, %v", i.String(), back.String(), err)
		}
		checkNode(t, i, isa.ParseGCCMarch)
	})
}

func FuzzParseX86Flags(f *testing.F) {
	for _, l := range readNamedLines(f, "testdata/x86_flags.txt") {
		f.Add(l)
	}
	f.Add(strings.Join(devMachineFlags(f), " "))
	f.Fuzz(func(t *testing.T, s string) {
		i := isa.ParseX86Flags(strings.Fields(s))
		checkNode(t, i, isa.Parse)
		again := isa.ParseX86Flags(i.Extensions())
		if diff := cmp.Diff(i, again); diff != "" {
			t.Fatalf("normalising twice (-once +twice):\n%s", diff)
		}
		if lvl := isa.X86Level(i); lvl < 1 || lvl > 4 {
			t.Fatalf("level %d", lvl)
		}
	})
}

func FuzzParseARM64Features(f *testing.F) {
	for _, l := range readNamedLines(f, "testdata/arm64_features.txt") {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i := isa.ParseARM64Features(strings.Fields(s))
		checkNode(t, i, isa.Parse)
		again := isa.ParseARM64Features(append(i.Extensions(), i.Unknown...))
		if diff := cmp.Diff(i, again); diff != "" {
			t.Fatalf("normalising twice (-once +twice):\n%s", diff)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add("rv64gcv | x86-64-v3 | arm64+sve")
	f.Add("RV64IMFD|rva23u64")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := isa.ParseRequest(s)
		if err != nil {
			return
		}
		for k, a := range r.Alternatives {
			if !isa.Satisfies(a, a) {
				t.Fatalf("alternative %d (%s) does not satisfy itself", k, a.Short())
			}
		}
		back, err := isa.ParseRequest(r.String())
		if err != nil {
			t.Fatalf("String %q does not parse back: %v", r.String(), err)
		}
		if back.String() != r.String() {
			t.Fatalf("normalising twice: %q then %q", r.String(), back.String())
		}
	})
}
