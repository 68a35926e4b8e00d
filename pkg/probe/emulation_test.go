package probe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/hack/probes"
	"github.com/isamatch/isamatch/pkg/isa"
)

const riscvInterp = "/usr/libexec/qemu-binfmt/riscv64-binfmt-P"

// binfmtFS is a host root with cpuinfo of an x86 node and the given
// binfmt_misc entries (name -> text), mounted and enabled.
func binfmtFS(entries map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"proc/cpuinfo":                       {Data: []byte("processor\t: 0\nflags\t\t: fpu sse sse2\n")},
		BinfmtDir + "/status":                {Data: []byte("enabled\n")},
		"usr/bin/qemu-riscv64":               {Data: []byte("qemu 1")},
		strings.TrimPrefix(riscvInterp, "/"): {Data: []byte("../../bin/qemu-riscv64"), Mode: os.ModeSymlink},
	}
	for name, text := range entries {
		fsys[BinfmtDir+"/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}

func riscvEntry(state, flags string) string {
	return state + "\ninterpreter " + riscvInterp + "\nflags: " + flags + "\noffset 0\nmagic 7f454c460201010000000000000000000200f300\n"
}

// fakeQEMU models a QEMU 7.2-like riscv64 emulator for the logic of the
// search: the default CPU has zba and zbb; model rv64 accepts the
// properties v, Zfh (capitalised) and zba/zbb; "zicond" is unknown to it.
// It counts runs.
type fakeQEMU struct {
	runs atomic.Int64
}

func (f *fakeQEMU) exec(_ context.Context, program string, env []string) error {
	f.runs.Add(1)
	arch, name, _ := strings.Cut(program, "/")
	if arch != "riscv64" {
		return errors.New("exec format error")
	}
	has := map[string]bool{"base": true, "zba": true, "zbb": true}
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "QEMU_CPU=")
		if !ok {
			continue
		}
		parts := strings.Split(v, ",")
		if parts[0] != "rv64" {
			return errors.New("unable to find CPU model '" + parts[0] + "'")
		}
		for _, p := range parts[1:] {
			switch p {
			case "v=true":
				has["v"] = true
			case "Zfh=true":
				has["zfh"] = true
			case "zba=true", "zbb=true":
			default:
				return errors.New("can't apply global rv64-riscv-cpu." + p)
			}
		}
	}
	if !has[name] {
		return errors.New("signal: illegal instruction")
	}
	return nil
}

// programsFS lists riscv64 probe programs (their contents do not matter
// to fakeQEMU).
func programsFS(names ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, n := range names {
		fsys["riscv64/"+n] = &fstest.MapFile{Data: []byte("program"), Mode: 0o755}
	}
	return fsys
}

func TestEmulatorSearch(t *testing.T) {
	q := &fakeQEMU{}
	em := &Emulator{Programs: programsFS("base", "v", "zba", "zbb", "zfh", "zicond"), Exec: q.exec}
	fsys := binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")})
	help := &fakeRunner{out: map[string]string{riscvInterp: "any\nrv64\nsifive-u54\n"}}
	res, err := Probe(t.Context(), Options{FS: fsys, Runner: help, Emulator: em})
	if err != nil {
		t.Fatalf("Probe(): %v", err)
	}
	if diff := cmp.Diff(map[isa.Arch]string{isa.RISCV64: "rv64,v=true,Zfh=true"}, res.QEMUCPU); diff != "" {
		t.Errorf("QEMUCPU (-want +got):\n%s", diff)
	}
	shortsOf := func(is []isa.ISA) []string {
		var out []string
		for _, i := range is {
			out = append(out, i.Short())
		}
		return out
	}
	wantDefault, _ := isa.Parse("rv64gc_zba_zbb")
	wantBest, _ := isa.Parse("rv64gcv_zba_zbb_zfh")
	if diff := cmp.Diff([]string{wantDefault.Short()}, shortsOf(res.EmuDefault)); diff != "" {
		t.Errorf("EmuDefault (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{wantBest.Short()}, shortsOf(res.Emulated)); diff != "" {
		t.Errorf("Emulated (-want +got):\n%s", diff)
	}
	wantAnn := map[string]string{
		isa.QEMUCPUAnnotation(isa.RISCV64): "rv64,v=true,Zfh=true",
		isa.EmuDefaultISAAnnotation:        wantDefault.Short(),
		isa.EmuISAAnnotation:               wantBest.Short(),
	}
	if diff := cmp.Diff(wantAnn, project(res.Annotations(), wantAnn)); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	labels := res.Labels()
	for _, k := range []string{isa.EmuPrefix + "rv.v", isa.EmuPrefix + "rv.zfh", isa.EmuPrefix + "rv.zba"} {
		if labels[k] != "true" {
			t.Errorf("label %s = %q, want true", k, labels[k])
		}
	}
	if _, ok := labels[isa.EmuPrefix+"rv.zicond"]; ok {
		t.Errorf("label rv.zicond set, but no QEMU_CPU ran the zicond program")
	}
	for _, want := range []string{"binfmt qemu-riscv64 (interpreter " + riscvInterp + ", flags OCF, sha256 ", "QEMU_CPU=rv64,v=true,Zfh=true also ran v,zfh", "not run: zicond"} {
		if !strings.Contains(res.EmuSource, want) {
			t.Errorf("EmuSource = %q, want it to contain %q", res.EmuSource, want)
		}
	}
	if len(res.EmuProblems) != 0 {
		t.Errorf("EmuProblems = %q, want none", res.EmuProblems)
	}
	if !slices.Contains(help.seen, riscvInterp+" -cpu help") {
		t.Errorf("the interpreter was not asked for its models: ran %q", help.seen)
	}

	// The same interpreter file: remembered, nothing runs.
	first := q.runs.Load()
	res2, err := Probe(t.Context(), Options{FS: fsys, Runner: help, Emulator: em})
	if err != nil {
		t.Fatalf("second Probe(): %v", err)
	}
	if n := q.runs.Load() - first; n != 0 {
		t.Errorf("second pass ran %d programs, want 0 (handler remembered)", n)
	}
	if diff := cmp.Diff(res.Labels(), res2.Labels()); diff != "" {
		t.Errorf("labels of the remembered pass (-first +second):\n%s", diff)
	}
	if !strings.Contains(res2.EmuSource, "(remembered)") {
		t.Errorf("EmuSource = %q, want it to say the result was remembered", res2.EmuSource)
	}

	// A new QEMU at the same path is a new handler: probed again.
	fsys["usr/bin/qemu-riscv64"] = &fstest.MapFile{Data: []byte("qemu 2, longer")}
	second := q.runs.Load()
	if _, err := Probe(t.Context(), Options{FS: fsys, Runner: help, Emulator: em}); err != nil {
		t.Fatalf("third Probe(): %v", err)
	}
	if q.runs.Load() == second {
		t.Errorf("a changed interpreter file was not probed again")
	}
}

func TestEmulatorUnavailable(t *testing.T) {
	ok := &fakeQEMU{}
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		em       *Emulator
		problem  string // substring of the one problem; "" for none
		source   string // substring of EmuSource
		emulated bool
	}{
		{
			name:    "handler without the F flag",
			fsys:    binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OC")}),
			em:      &Emulator{Programs: programsFS("base"), Exec: ok.exec},
			problem: "binfmt_misc handler qemu-riscv64 has no F flag: the kernel looks its interpreter " + riscvInterp + " up in each container's own file system",
			source:  "without the F flag",
		},
		{
			name:    "handler disabled",
			fsys:    binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("disabled", "OCF")}),
			em:      &Emulator{Programs: programsFS("base"), Exec: ok.exec},
			problem: "binfmt_misc handler qemu-riscv64 is disabled: no riscv64 emulation labels",
			source:  "binfmt qemu-riscv64 disabled",
		},
		{
			name: "binfmt_misc disabled globally",
			fsys: func() fstest.MapFS {
				f := binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")})
				f[BinfmtDir+"/status"] = &fstest.MapFile{Data: []byte("disabled\n")}
				return f
			}(),
			em:      &Emulator{Programs: programsFS("base"), Exec: ok.exec},
			problem: "binfmt_misc is disabled on the host",
			source:  "binfmt qemu-riscv64 disabled",
		},
		{
			name:   "binfmt_misc not mounted",
			fsys:   fstest.MapFS{"proc/cpuinfo": {Data: []byte("processor\t: 0\nflags\t\t: fpu sse sse2\n")}},
			em:     &Emulator{Programs: programsFS("base"), Exec: ok.exec},
			source: "binfmt_misc not mounted",
		},
		{
			name:    "no probe programs",
			fsys:    binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")}),
			problem: "has no probe programs to run through it",
			source:  "not probed",
		},
		{
			name:    "no riscv64 programs",
			fsys:    binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")}),
			em:      &Emulator{Programs: fstest.MapFS{"arm64/base": {Data: []byte("x")}}, Exec: ok.exec},
			problem: "there are no riscv64 probe programs",
		},
		{
			name: "the handler runs nothing",
			fsys: binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")}),
			em: &Emulator{Programs: programsFS("base", "v"), Exec: func(context.Context, string, []string) error {
				return errors.New("fork/exec /probes/riscv64/base: exec format error")
			}},
			problem: "the baseline probe riscv64/base did not run with the default CPU: fork/exec /probes/riscv64/base: exec format error; no riscv64 emulation labels",
		},
		{
			name:     "an entry of another architecture is not a problem",
			fsys:     binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF"), "qemu-s390x": "enabled\ninterpreter /usr/bin/qemu-s390x\nflags: F\n"}),
			em:       &Emulator{Programs: programsFS("base"), Exec: ok.exec},
			source:   "binfmt qemu-s390x enabled (no isamatch architecture)",
			emulated: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Probe(t.Context(), Options{FS: tc.fsys, Runner: &fakeRunner{}, Emulator: tc.em})
			if err != nil {
				t.Fatalf("Probe(): %v", err)
			}
			if tc.problem == "" && len(res.EmuProblems) > 0 {
				t.Errorf("EmuProblems = %q, want none", res.EmuProblems)
			}
			if tc.problem != "" && (len(res.EmuProblems) != 1 || !strings.Contains(res.EmuProblems[0], tc.problem)) {
				t.Errorf("EmuProblems = %q, want one containing %q", res.EmuProblems, tc.problem)
			}
			if !strings.Contains(res.EmuSource, tc.source) {
				t.Errorf("EmuSource = %q, want it to contain %q", res.EmuSource, tc.source)
			}
			if got := len(res.Emulated) > 0; got != tc.emulated {
				t.Errorf("emulated = %v (%v), want %v", got, res.Emulated, tc.emulated)
			}
			_, hasSource := res.Annotations()[isa.EmuSourceAnnotation]
			if want := tc.emulated || tc.problem != ""; hasSource != want {
				t.Errorf("annotation %s present = %v, want %v", isa.EmuSourceAnnotation, hasSource, want)
			}
		})
	}
}

// TestEmulatorRealQEMU runs the real probe programs (hack/probes) through
// Debian's qemu-user-static, as the kernel would through binfmt_misc:
// what the default CPU runs, what the QEMU_CPU found runs, and that the
// value really unlocks the V program. It needs the cross binutils and
// qemu-user-static (hack/deps.sh node): skipped without them, failed under
// CI=true.
func TestEmulatorRealQEMU(t *testing.T) {
	qemu := needTool(t, "qemu-riscv64-static", "qemu-user-static")
	dir := t.TempDir()
	if err := probes.Build(t.Context(), dir, "riscv64"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	execQEMU := func(ctx context.Context, program string, env []string) error {
		cmd := exec.CommandContext(ctx, qemu, filepath.Join(dir, program))
		cmd.Env = env
		return cmd.Run()
	}
	em := &Emulator{Programs: os.DirFS(dir), Exec: execQEMU}
	fsys := binfmtFS(map[string]string{"qemu-riscv64": riscvEntry("enabled", "OCF")})
	// "-cpu help" of the real interpreter, run directly.
	host := &ExecRunner{Root: "/", Timeout: DefaultCommandTimeout}
	fsys["proc/sys/fs/binfmt_misc/qemu-riscv64"].Data = []byte(strings.Replace(riscvEntry("enabled", "OCF"), riscvInterp, qemu, 1))
	res, err := Probe(t.Context(), Options{FS: fsys, Runner: host, Emulator: em})
	if err != nil {
		t.Fatalf("Probe(): %v", err)
	}
	t.Logf("source: %s", res.EmuSource)
	if len(res.EmuProblems) > 0 {
		t.Fatalf("EmuProblems = %q", res.EmuProblems)
	}
	if len(res.EmuDefault) != 1 || len(res.Emulated) != 1 {
		t.Fatalf("EmuDefault %v, Emulated %v: want one riscv64 ISA each", res.EmuDefault, res.Emulated)
	}
	def, best := res.EmuDefault[0], res.Emulated[0]
	if !isa.Satisfies(best, def) {
		t.Errorf("QEMU_CPU runs %s, less than the default CPU's %s", best.Short(), def.Short())
	}
	v, _ := isa.Parse("rv64gcv")
	if !isa.Satisfies(best, v) {
		t.Fatalf("no QEMU_CPU found that runs V: best %s", best.Short())
	}
	if isa.Satisfies(def, v) {
		t.Logf("this QEMU's default CPU runs V already: QEMU_CPU %q", res.QEMUCPU[isa.RISCV64])
		return
	}
	value := res.QEMUCPU[isa.RISCV64]
	if value == "" {
		t.Fatalf("the default CPU lacks V, best has it, but no QEMU_CPU was recorded")
	}
	if err := execQEMU(t.Context(), "riscv64/v", []string{}); err == nil {
		t.Errorf("the V program ran with the default CPU, which the probe said lacks V")
	}
	if err := execQEMU(t.Context(), "riscv64/v", cpuEnv(value)); err != nil {
		t.Errorf("the V program under QEMU_CPU=%s: %v", value, err)
	}
}

// needTool returns the path of tool, skipping (failing under CI=true)
// when it is missing.
func needTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found: hack/deps.sh node installs %s", tool, pkg)
		}
		t.Skipf("%s not found: install %s (hack/deps.sh node)", tool, pkg)
	}
	return p
}
