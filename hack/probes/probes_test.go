package probes

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

// TestProgramsFollowTheNamingRule: every source names what it proves in a
// way pkg/probe reads, and every architecture has its baseline.
func TestProgramsFollowTheNamingRule(t *testing.T) {
	bases := map[string]bool{}
	for _, p := range Programs() {
		if _, err := probe.ProgramISA(isa.Arch(p.Arch), p.Name); err != nil {
			t.Errorf("%s/%s.s: %v", p.Arch, p.Name, err)
		}
		if p.Name == probe.BaseProgram {
			bases[p.Arch] = true
		}
	}
	for _, tc := range toolchains {
		if !bases[tc.arch] {
			t.Errorf("%s has no %s program", tc.arch, probe.BaseProgram)
		}
	}
}

// TestBuildAndRunNative builds every program and runs those of this
// machine's architecture natively: each exits 0 when the CPU has what it
// proves (by /proc/cpuinfo, as the labeler reads it), and is killed by
// SIGILL when it lacks it. A program may also pass where /proc/cpuinfo
// lacks a feature: a hypervisor can hide a CPUID bit (seen: LZCNT, `abm`,
// on an AMD EPYC guest) while the CPU still executes the instruction, and
// the program's checks of each result prove it did. That is logged, not
// failed: the labeler follows /proc/cpuinfo, as glibc's hwcaps and Go's
// GOAMD64 start-up check follow CPUID. It needs the cross binutils
// (hack/deps.sh): skipped without them, failed under CI=true.
func TestBuildAndRunNative(t *testing.T) {
	dir := t.TempDir()
	if err := Build(t.Context(), dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, p := range Programs() {
		if st, err := os.Stat(filepath.Join(dir, p.Arch, p.Name)); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("%s/%s not built with mode 0755: %v", p.Arch, p.Name, err)
		}
	}
	res, err := probe.Probe(t.Context(), probe.Options{HostRoot: "/", NativeGCC: []string{}, CrossGCC: []string{}})
	if err != nil {
		t.Skipf("this machine's ISA is not known: %v", err)
	}
	if string(res.Native.Arch) != runtime.GOARCH {
		t.Skipf("native ISA %s is not GOARCH %s", res.Native.Arch, runtime.GOARCH)
	}
	for _, p := range Programs() {
		if p.Arch != runtime.GOARCH {
			continue
		}
		want, err := probe.ProgramISA(isa.Arch(p.Arch), p.Name)
		if err != nil {
			t.Fatal(err)
		}
		has := isa.Satisfies(res.Native, want)
		err = exec.CommandContext(t.Context(), filepath.Join(dir, p.Arch, p.Name)).Run()
		var ee *exec.ExitError
		switch {
		case has && err != nil:
			t.Errorf("%s/%s: this CPU has %s but the program failed: %v", p.Arch, p.Name, want.Short(), err)
		case !has && err == nil:
			t.Logf("%s/%s: /proc/cpuinfo lacks %v, yet the program ran and its results were right: the CPU executes what it does not report", p.Arch, p.Name, isa.Missing(res.Native, want))
		case !has && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGILL):
			t.Errorf("%s/%s: this CPU lacks %v: want SIGILL, got %v", p.Arch, p.Name, isa.Missing(res.Native, want), err)
		}
	}
}
