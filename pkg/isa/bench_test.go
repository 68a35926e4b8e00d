package isa_test

import (
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/isa"
)

// The performance goals: Satisfies on pre-parsed values under 100 ns without
// allocation; parsing a typical cpuinfo line under 10 µs.

var sinkBool bool

func BenchmarkSatisfies(b *testing.B) {
	node, err := isa.ParseCPUInfoRISCV("rv64imafdcv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_sscofpmf_sstc_svinval_svnapot_svpbmt", isa.Hints{})
	if err != nil {
		b.Fatal(err)
	}
	req := mustParse(b, "rv64gcv_zba_zbb_zbs")
	b.ReportAllocs()
	for b.Loop() {
		sinkBool = isa.Satisfies(node, req)
	}
	if !sinkBool {
		b.Fatal("K1 does not satisfy rv64gcv_zba_zbb_zbs")
	}
}

func BenchmarkParseCPUInfo(b *testing.B) {
	line := "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zaamo_zalrsc_zca_zcd_zba_zbb" // VisionFive 2, Linux 6.15
	b.ReportAllocs()
	for b.Loop() {
		if _, err := isa.ParseCPUInfoRISCV(line, isa.Hints{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCPUInfoLong(b *testing.B) {
	line := "rv64imafdcv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_sscofpmf_sstc_svinval_svnapot_svpbmt_ime" // SpacemiT K1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := isa.ParseCPUInfoRISCV(line, isa.Hints{UArch: "spacemit,x60"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseX86Flags(b *testing.B) {
	flags := strings.Fields(readNamedLines(b, "testdata/x86_flags.txt")["xeon-platinum-8380"])
	b.ReportAllocs()
	for b.Loop() {
		isa.ParseX86Flags(flags)
	}
}

func BenchmarkParseRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := isa.ParseRequest("rv64gcv_zba_zbb_zbs | x86-64-v3 | arm64+sve"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequirements(b *testing.B) {
	req := mustParse(b, "rva23u64")
	b.ReportAllocs()
	for b.Loop() {
		isa.Requirements(req, false)
	}
}
