package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/isamatch/isamatch/internal/oracle"
)

// A nodeKind is one machine type of the randomized cluster: a host root the
// labeler probes, built from a fixture of pkg/probe/testdata or generated.
type nodeKind struct {
	name string
	arch string // kubelet's kubernetes.io/arch
	// fixture is copied (proc/cpuinfo only) unless cpuinfo is set.
	fixture string
	// cpuinfo, when set, is written as proc/cpuinfo instead.
	cpuinfo func(repo string) (string, error)
	// crossArch, when set, installs the paper's cross compiler
	// /opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc configured --with-arch=crossArch.
	crossArch string
}

// nodeKinds has at least one machine per ISA the issue lists: x86-64
// v2/v3/v4, arm64 with and without SVE, rv64gc, rv64gcv, rva22u64,
// rva23u64, the paper's IMFD/IMFV/IMFDV, a TH1520 (vector 0.7.1), and
// cross-compiling hosts (the paper's QEMU column) on amd64 and arm64.
var nodeKinds = []nodeKind{
	{name: "x86-64-v2", arch: "amd64", cpuinfo: x86V2CPUInfo},
	{name: "x86-64-v3", arch: "amd64", fixture: "x86-64-v3"},
	{name: "x86-64-v4", arch: "amd64", fixture: "x86-64-v4"},
	{name: "x86-64-v3-cross-imfdv", arch: "amd64", fixture: "x86-64-v3", crossArch: "rv64imfdv"},
	{name: "x86-64-v4-cross-gcv", arch: "amd64", fixture: "x86-64-v4", crossArch: "rv64gcv"},
	{name: "arm64", arch: "arm64", fixture: "paper-node2"},
	{name: "arm64-sve", arch: "arm64", fixture: "arm64-sve"},
	{name: "arm64-cross-gc", arch: "arm64", fixture: "paper-node2", crossArch: "rv64gc"},
	{name: "rv64gc", arch: "riscv64", fixture: "visionfive2"},
	{name: "rv64gcv", arch: "riscv64", fixture: "qemu-virt-rv64gcv"},
	{name: "rva22u64", arch: "riscv64", cpuinfo: riscvCPUInfo(
		"rv64imafdc_zicbom_zicbop_zicboz_zicntr_zicsr_zifencei_zihintpause_zihpm_zfhmin_zba_zbb_zbs_zkt")},
	{name: "rva23u64", arch: "riscv64", cpuinfo: riscvCPUInfo(
		"rv64imafdcv_zicbom_zicbop_zicboz_zicntr_zicond_zicsr_zifencei_zihintntl_zihintpause_zihpm_zimop_zawrs_zfa_zfhmin_zcb_zcmop_zba_zbb_zbs_zkt_zvbb_zvfhmin_zvkt_supm")},
	{name: "imfd", arch: "riscv64", fixture: "paper-node3"},
	{name: "imfv", arch: "riscv64", fixture: "paper-node4"},
	{name: "imfdv", arch: "riscv64", fixture: "paper-node5"},
	{name: "th1520", arch: "riscv64", fixture: "lichee-pi-4a"},
}

// writeHostRoot builds kind's host root in dir.
func writeHostRoot(repo, dir string, kind nodeKind) error {
	var cpuinfo string
	if kind.cpuinfo != nil {
		s, err := kind.cpuinfo(repo)
		if err != nil {
			return err
		}
		cpuinfo = s
	} else {
		data, err := os.ReadFile(filepath.Join(repo, "pkg", "probe", "testdata", kind.fixture, "proc", "cpuinfo"))
		if err != nil {
			return fmt.Errorf("read fixture %s: %w", kind.fixture, err)
		}
		cpuinfo = string(data)
	}
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "cpuinfo"), []byte(cpuinfo), 0o644); err != nil {
		return err
	}
	if kind.crossArch == "" {
		return nil
	}
	// The paper's cross compiler, as in the paper-node1 fixture, configured
	// for kind.crossArch.
	script, err := os.ReadFile(filepath.Join(repo, "pkg", "probe", "testdata", "paper-node1", oracle.CrossGCC))
	if err != nil {
		return fmt.Errorf("read the paper-node1 cross gcc: %w", err)
	}
	script = bytes.ReplaceAll(script, []byte("rv64imfdv"), []byte(kind.crossArch))
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(oracle.CrossGCC)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, oracle.CrossGCC), script, 0o755)
}

// riscvCPUInfo writes four harts of a Linux 6.6-style RISC-V cpuinfo.
func riscvCPUInfo(isaLine string) func(string) (string, error) {
	return func(string) (string, error) {
		var b strings.Builder
		for h := range 4 {
			fmt.Fprintf(&b, "processor\t: %d\nhart\t\t: %d\nisa\t\t: %s\nmmu\t\t: sv39\n\n", h, h, isaLine)
		}
		return b.String(), nil
	}
}

// x86V2CPUInfo is the x86-64-v3 fixture without the features v3 adds
// (AVX, AVX2, BMI1/2, F16C, FMA, LZCNT, MOVBE, XSAVE): an x86-64-v2 machine.
func x86V2CPUInfo(repo string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repo, "pkg", "probe", "testdata", "x86-64-v3", "proc", "cpuinfo"))
	if err != nil {
		return "", fmt.Errorf("read x86-64-v3 fixture: %w", err)
	}
	drop := map[string]bool{"avx": true, "avx2": true, "bmi1": true, "bmi2": true, "f16c": true, "fma": true,
		"abm": true, "movbe": true, "xsave": true, "xsaveopt": true}
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			var kept []string
			for _, f := range strings.Fields(v) {
				if !drop[f] {
					kept = append(kept, f)
				}
			}
			line = k + ": " + strings.Join(kept, " ")
		}
		out.WriteString(line + "\n")
	}
	return out.String(), sc.Err()
}
