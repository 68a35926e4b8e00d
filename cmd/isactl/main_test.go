package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/isacli"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // substrings, in order
		stderr     []string
		exactLines []string // when set, stdout must be exactly these lines
	}{
		{name: "no args", args: nil, code: 2, stderr: []string{"usage:"}},
		{name: "help", args: []string{"help"}, code: 0, stdout: []string{"usage:", "isactl match"}},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: []string{`unknown command "frobnicate"`, "usage:"}},
		{name: "normalize paper form", args: []string{"normalize", "RV64IMFD"}, code: 0, exactLines: []string{
			"canonical:  rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0",
			"short:      rv64imfd_zicsr_zmmul",
			"arch:       riscv64",
			"xlen:       64",
			"extensions: i m f d zicsr zmmul",
		}},
		{name: "normalize rv32", args: []string{"normalize", "rv32imac"}, code: 0, stdout: []string{"arch:       riscv32", "xlen:       32", "extensions: i m a c zmmul zaamo zalrsc zca"}},
		{name: "normalize x86", args: []string{"normalize", "x86-64-v2+pni"}, code: 0, stdout: []string{"canonical:  x86-64-v2", "x86-64 level: 2"}},
		{name: "normalize cpuinfo", args: []string{"normalize", "--from=cpuinfo", "rv64imafdcsu"}, code: 0, stdout: []string{"short:      rv64imafdc_zicntr_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd"}},
		{name: "normalize gcc", args: []string{"normalize", "--from", "gcc", "--", "-march=rv64gc_xtheadint"}, code: 0, stdout: []string{"unknown:    xtheadint"}},
		{name: "normalize elf", args: []string{"normalize", "--from=elf", "rv64i2p1_m2p0"}, code: 0, stdout: []string{"short:      rv64im_zmmul"}},
		{name: "normalize bad token", args: []string{"normalize", "rv64gc_zbx"}, code: 1, stderr: []string{"'zbx'", "accepted"}},
		{name: "normalize bad x86 feature", args: []string{"normalize", "x86-64-v3+avx513"}, code: 1, stderr: []string{`"avx513"`}},
		{name: "normalize bad --from", args: []string{"normalize", "--from=xml", "rv64gc"}, code: 2, stderr: []string{`--from="xml"`}},
		{name: "normalize unknown flag", args: []string{"normalize", "--yaml", "rv64gc"}, code: 2, stderr: []string{"-yaml"}},
		{name: "normalize two strings", args: []string{"normalize", "rv64gc", "rv64gcv"}, code: 2, stderr: []string{"needs one STRING"}},
		{name: "match paper example", args: []string{"match", "RV64IMFD", "RV64IMFD"}, code: 0, exactLines: []string{"match: rv64imfd_zicsr_zmmul", "affinity: 1.0000"}},
		{name: "match surplus node", args: []string{"match", "RV64IMFD", "RV64IMFDV"}, code: 0, stdout: []string{"affinity: 0.4000"}},
		{name: "match alternative", args: []string{"match", "rv64gcv | x86-64-v3", "x86-64-v4"}, code: 0, stdout: []string{"match: x86-64-v3"}},
		{name: "no match lists missing", args: []string{"match", "rv64gcv", "rv64gc"}, code: 1, stdout: []string{"no match", "missing for rv64imafdcv", ": v zve32f", "affinity: 0.0000"}},
		{name: "no match arch", args: []string{"match", "arm64+sve2", "rv64gc"}, code: 1, stdout: []string{"missing for arm64+sve+sve2: arch:arm64"}},
		{name: "match bad request", args: []string{"match", "rv64gc |", "rv64gc"}, code: 1, stderr: []string{"request:", "alternative 2 is empty"}},
		{name: "match bad node", args: []string{"match", "rv64gc", "rv64gq_zz"}, code: 1, stderr: []string{"node:", "'zz'"}},
		{name: "match one arg", args: []string{"match", "rv64gc"}, code: 2, stderr: []string{"REQUEST and NODE_ISA"}},
		{name: "labels", args: []string{"labels", "rv64imac"}, code: 0, exactLines: []string{
			"isa.isamatch.io/arch=riscv64",
			"isa.isamatch.io/ext-count=8",
			"isa.isamatch.io/group=403780b4db",
			"isa.isamatch.io/rv.a=true",
			"isa.isamatch.io/rv.c=true",
			"isa.isamatch.io/rv.i=true",
			"isa.isamatch.io/rv.m=true",
			"isa.isamatch.io/rv.zaamo=true",
			"isa.isamatch.io/rv.zalrsc=true",
			"isa.isamatch.io/rv.zca=true",
			"isa.isamatch.io/rv.zmmul=true",
		}},
		{name: "labels emulated", args: []string{"labels", "--emulated", "rv64gc", "--emulated=arm64", "x86-64-v3"}, code: 0,
			stdout: []string{"isa.isamatch.io/x86-64-level=3", "qemu.isamatch.io/arm64=true", "qemu.isamatch.io/ext-count.riscv64=13", "qemu.isamatch.io/riscv64=true", "qemu.isamatch.io/rv.zcd=true"}},
		{name: "labels bad emulated", args: []string{"labels", "--emulated", "mips", "x86-64"}, code: 1, stderr: []string{`"mips"`}},
		{name: "labels bad node", args: []string{"labels", "rv64gcx"}, code: 1, stderr: []string{"'x'"}},
		{name: "affinity", args: []string{"affinity", "x86-64-v3"}, code: 0, exactLines: []string{
			"nodeAffinity:",
			"  requiredDuringSchedulingIgnoredDuringExecution:",
			"    nodeSelectorTerms:",
			"    - matchExpressions:",
			"      - key: isa.isamatch.io/arch",
			"        operator: In",
			"        values:",
			"        - amd64",
			"      - key: isa.isamatch.io/x86-64-level",
			"        operator: Gt",
			"        values:",
			`        - "2"`,
		}},
		{name: "affinity emulated", args: []string{"affinity", "--emulated", "arm64+sve"}, code: 0, stdout: []string{"key: qemu.isamatch.io/arm64", "key: qemu.isamatch.io/arm64.sve"}},
		{name: "affinity bad", args: []string{"affinity", "sparc64"}, code: 1, stderr: []string{`"sparc64"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.exactLines != nil {
				if diff := cmp.Diff(tc.exactLines, strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			containsInOrder(t, "stdout", stdout.String(), tc.stdout)
			containsInOrder(t, "stderr", stderr.String(), tc.stderr)
			if code == 0 && stderr.Len() > 0 {
				t.Errorf("stderr on success: %q", stderr.String())
			}
		})
	}
}

func containsInOrder(t *testing.T, what, s string, subs []string) {
	t.Helper()
	rest := s
	for _, sub := range subs {
		k := strings.Index(rest, sub)
		if k < 0 {
			t.Errorf("%s %q lacks %q (in order)", what, s, sub)
			return
		}
		rest = rest[k+len(sub):]
	}
}

func TestNormalizeJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"normalize", "--json", "rv64gc_zba"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got isacli.Normalized
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := isacli.Normalized{
		Canonical:  "rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0_zmmul1p0_zaamo1p0_zalrsc1p0_zca1p0_zcd1p0_zba1p0",
		Short:      "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd_zba",
		Arch:       "riscv64",
		XLEN:       64,
		Extensions: []string{"i", "m", "a", "f", "d", "c", "zicsr", "zifencei", "zmmul", "zaamo", "zalrsc", "zca", "zcd", "zba"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAffinityYAMLIsANodeAffinity: the YAML decodes into the Kubernetes type
// with one term per alternative.
func TestAffinityYAMLIsANodeAffinity(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"affinity", "rv64gcv | x86-64-v3 | arm64+sve"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var a corev1.Affinity
	if err := yaml.UnmarshalStrict(stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var archs []string
	for _, term := range terms {
		archs = append(archs, term.MatchExpressions[0].Values[0])
	}
	if diff := cmp.Diff([]string{"riscv64", "amd64", "arm64"}, archs); diff != "" {
		t.Errorf("term archs (-want +got):\n%s", diff)
	}
}

func Example() {
	run([]string{"match", "RV64IMFD", "RV64IMFDV"}, os.Stdout, os.Stderr)
	run([]string{"labels", "x86-64-v2"}, os.Stdout, os.Stderr)
	// Output:
	// match: rv64imfd_zicsr_zmmul
	// affinity: 0.4000
	// isa.isamatch.io/arch=amd64
	// isa.isamatch.io/ext-count=14
	// isa.isamatch.io/group=0a735be6f7
	// isa.isamatch.io/x86-64-level=2
	// isa.isamatch.io/x86.cmov=true
	// isa.isamatch.io/x86.cx16=true
	// isa.isamatch.io/x86.cx8=true
	// isa.isamatch.io/x86.fxsr=true
	// isa.isamatch.io/x86.mmx=true
	// isa.isamatch.io/x86.popcnt=true
	// isa.isamatch.io/x86.sahf=true
	// isa.isamatch.io/x86.sse=true
	// isa.isamatch.io/x86.sse2=true
	// isa.isamatch.io/x86.sse3=true
	// isa.isamatch.io/x86.sse4.1=true
	// isa.isamatch.io/x86.sse4.2=true
	// isa.isamatch.io/x86.ssse3=true
	// isa.isamatch.io/x86.x87=true
}
