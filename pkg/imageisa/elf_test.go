package imageisa

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// fixtureCase is one committed toolchain output and what it must say.
type fixtureCase struct {
	file string
	// want is what the -march or -z level given to the toolchain parses
	// to with isa.Parse; "" when the binary records nothing.
	want     string
	arch     isa.Arch
	raw      string
	from     string // in-memory path (sections by name)
	fromSeg  string // streamed path (program headers)
	usedNote bool
}

var fixtureCases = []fixtureCase{
	{file: "riscv64-rv64imfd", want: "rv64imfd", arch: isa.RISCV64, raw: "rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0", from: ".riscv.attributes", fromSeg: "PT_RISCV_ATTRIBUTES"},
	{file: "riscv64-rv64imfdv", want: "rv64imfdv", arch: isa.RISCV64, raw: "rv64i2p1_m2p0_f2p2_d2p2_v1p0_zicsr2p0_zmmul1p0_zve32f1p0_zve32x1p0_zve64d1p0_zve64f1p0_zve64x1p0_zvl128b1p0_zvl32b1p0_zvl64b1p0", from: ".riscv.attributes", fromSeg: "PT_RISCV_ATTRIBUTES"},
	{file: "riscv64-rv64gcv_zba_zbb", want: "rv64gcv_zba_zbb", arch: isa.RISCV64, raw: "rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_v1p0_zicsr2p0_zifencei2p0_zmmul1p0_zba1p0_zbb1p0_zve32f1p0_zve32x1p0_zve64d1p0_zve64f1p0_zve64x1p0_zvl128b1p0_zvl32b1p0_zvl64b1p0", from: ".riscv.attributes", fromSeg: "PT_RISCV_ATTRIBUTES"},
	{file: "riscv64-rv64gc", want: "rv64gc", arch: isa.RISCV64, raw: "rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0_zmmul1p0", from: ".riscv.attributes", fromSeg: "PT_RISCV_ATTRIBUTES"},
	{file: "riscv32-rv32imac", want: "rv32imac", arch: isa.RISCV32, raw: "rv32i2p1_m2p0_a2p1_c2p0_zmmul1p0", from: ".riscv.attributes", fromSeg: "PT_RISCV_ATTRIBUTES"},
	{file: "riscv64-noattr", arch: isa.RISCV64},
	{file: "amd64-v2", want: "x86-64-v2", arch: isa.AMD64, raw: "x86-64-v2", from: ".note.gnu.property", fromSeg: "PT_GNU_PROPERTY"},
	{file: "amd64-v3", want: "x86-64-v3", arch: isa.AMD64, raw: "x86-64-v3", from: ".note.gnu.property", fromSeg: "PT_GNU_PROPERTY"},
	{file: "amd64-v4", want: "x86-64-v4", arch: isa.AMD64, raw: "x86-64-v4", from: ".note.gnu.property", fromSeg: "PT_GNU_PROPERTY"},
	{file: "amd64-plain", arch: isa.AMD64},
	// -mx86-used-note=yes records ISA_1_USED only: not a requirement.
	{file: "amd64-used", arch: isa.AMD64, usedNote: true},
	{file: "amd64-v3-used", want: "x86-64-v3", arch: isa.AMD64, raw: "x86-64-v3", from: ".note.gnu.property", fromSeg: "PT_GNU_PROPERTY", usedNote: true},
}

type fixtureGot struct {
	ISA, Raw, From string
	Arch           isa.Arch
	UsedNote       bool
}

func checkFixture(t *testing.T, tc fixtureCase, data []byte, inMemory int64, from string) {
	t.Helper()
	info, err := readELF(bytes.NewReader(data), int64(len(data)), inMemory, DefaultLimits.MaxSection)
	if err != nil {
		t.Fatal(err)
	}
	res, err := finish(Result{Path: "/app"}, info, "")
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureGot{Arch: tc.arch, Raw: tc.raw, UsedNote: tc.usedNote}
	if tc.want != "" {
		w, err := isa.Parse(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		want.ISA, want.From = w.String(), from
	}
	got := fixtureGot{Arch: res.Arch, Raw: res.Raw, From: res.From, UsedNote: res.Note != ""}
	if res.ISA != nil {
		got.ISA = res.ISA.String()
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", tc.file, d)
	}
}

// TestFixtures reads each committed toolchain output twice: whole, by
// section names (debug/elf), and streamed, by program headers.
func TestFixtures(t *testing.T) {
	for _, tc := range fixtureCases {
		t.Run(tc.file, func(t *testing.T) {
			data := fixture(t, tc.file)
			checkFixture(t, tc, data, DefaultLimits.MaxELFInMemory, tc.from)
			checkFixture(t, tc, data, 0, tc.fromSeg)
		})
	}
}

// TestToolchainFixtures rebuilds the fixtures with hack/elf-fixtures.sh and
// checks the fresh outputs the same way, so a toolchain that records
// something else is noticed. It needs gcc-riscv64-linux-gnu (hack/deps.sh):
// skipped without it, failed under CI=true.
func TestToolchainFixtures(t *testing.T) {
	for _, tool := range []string{"riscv64-linux-gnu-gcc", "riscv64-linux-gnu-objcopy", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found: hack/deps.sh installs gcc-riscv64-linux-gnu and binutils-riscv64-linux-gnu", tool)
			}
			t.Skipf("%s not found: install gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu (hack/deps.sh) to rebuild the ELF fixtures", tool)
		}
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), filepath.Join("..", "..", "hack", "elf-fixtures.sh"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/elf-fixtures.sh: %v\n%s", err, b)
	}
	for _, tc := range fixtureCases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(out, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, tc, data, DefaultLimits.MaxELFInMemory, tc.from)
			checkFixture(t, tc, data, 0, tc.fromSeg)
		})
	}
}
