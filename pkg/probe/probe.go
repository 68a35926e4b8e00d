package probe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Default host paths, absolute inside the host root.
var (
	// DefaultNativeGCC are tried in order for the host's own gcc.
	DefaultNativeGCC = []string{"/usr/bin/gcc", "/usr/local/bin/gcc"}
	// DefaultCrossGCC are the cross toolchains the paper installs under /opt/RISCV.
	DefaultCrossGCC = []string{"/opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc"}
)

// Options configure [Probe]. The zero value probes "/host".
type Options struct {
	// HostRoot is the host's "/" as mounted in the pod; "" means "/host".
	HostRoot string
	// FS reads files of the host root; nil means os.DirFS(HostRoot).
	FS fs.FS
	// Runner runs host binaries; nil means NewRunner(HostRoot, CommandTimeout).
	Runner Runner
	// CommandTimeout bounds each host command; zero means 10 seconds.
	CommandTimeout time.Duration
	// NativeGCC and CrossGCC override DefaultNativeGCC / DefaultCrossGCC.
	NativeGCC []string
	CrossGCC  []string
	// HWProbe, when set, is asked for riscv_hwprobe answers (the labeler
	// sets SystemHWProbe on linux/riscv64 builds). Tests leave it nil so the
	// build machine's kernel never leaks into a fixture's result.
	HWProbe func() ([]HWProbePair, error)
	// Emulator, when set, runs probe programs through the host's QEMU
	// binfmt_misc handlers; nil means no handler is probed, so none gives
	// emulation labels (each is named in Result.EmuProblems).
	Emulator *Emulator
}

// Result is what a node can run.
type Result struct {
	// Native is the ISA the node executes natively.
	Native isa.ISA
	// NativeSource names the source that decided Native and what every
	// other source said, on one line.
	NativeSource string
	// Hints are the vendor facts cpuinfo (or hwprobe) reported.
	Hints isa.Hints
	// Emulated holds, per architecture, what the node can cross-compile or
	// run under QEMU user-mode emulation, sorted by architecture.
	Emulated []isa.ISA
	// EmuSource says where Emulated came from, on one line.
	EmuSource string
	// EmuDefault is, per architecture with a usable QEMU handler, what
	// the handler runs with its default CPU (no QEMU_CPU); Emulated has
	// what it runs under QEMUCPU.
	EmuDefault []isa.ISA
	// QEMUCPU is, per architecture, the QEMU_CPU value under which the
	// handler runs what Emulated says, when that is more than its default
	// CPU runs.
	QEMUCPU map[isa.Arch]string
	// EmuProblems say why QEMU handlers the host has give no emulation
	// labels (disabled, no F flag, nothing probed or ran), one sentence
	// each; empty when there is no handler or every one is used.
	EmuProblems []string
	// Failed names the sources (SourceHWProbe, SourceGCC, SourceCrossGCC)
	// that were there but failed without failing the probe: a gcc that
	// crashed, a hwprobe syscall error. A missing gcc is not a failure.
	Failed []string
}

// Labels returns the node labels for r (all under isa.isamatch.io/ and
// qemu.isamatch.io/): with isa.EmuExecLabel for each architecture a QEMU
// handler ran the probe programs of (EmuDefault), as a cross compiler's
// emulation labels start no program.
func (r Result) Labels() map[string]string {
	l := isa.NodeLabels(r.Native, r.Emulated)
	for _, d := range r.EmuDefault {
		l[isa.EmuExecLabel(d.Arch)] = "true"
	}
	return l
}

// Annotations returns the node annotations for r. The qemu.isamatch.io/
// ones are absent when the node has no emulation or cross capability (and
// no QEMU handler it could not use), so reconciling removes stale ones.
func (r Result) Annotations() map[string]string {
	a := map[string]string{
		isa.NativeISAAnnotation:    r.Native.Short(),
		isa.NativeSourceAnnotation: r.NativeSource,
	}
	if len(r.Emulated) > 0 {
		a[isa.EmuISAAnnotation] = shorts(r.Emulated)
	}
	if len(r.Emulated) > 0 || len(r.EmuProblems) > 0 {
		a[isa.EmuSourceAnnotation] = r.EmuSource
	}
	if len(r.EmuDefault) > 0 {
		a[isa.EmuDefaultISAAnnotation] = shorts(r.EmuDefault)
	}
	for arch, v := range r.QEMUCPU {
		a[isa.QEMUCPUAnnotation(arch)] = v
	}
	return a
}

// shorts is the short forms of isas, comma-separated.
func shorts(isas []isa.ISA) string {
	out := make([]string, len(isas))
	for i, e := range isas {
		out[i] = e.Short()
	}
	return strings.Join(out, ",")
}

// Probe inspects the host root and returns what the node runs natively and
// under emulation. An unreadable /proc/cpuinfo is an error; a missing gcc,
// cross gcc or binfmt_misc is not. Errors of a source are *[SourceError]
// ([FailedSource] names it).
func Probe(ctx context.Context, opts Options) (Result, error) {
	root := opts.HostRoot
	if root == "" {
		root = "/host"
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = os.DirFS(root)
	}
	runner := opts.Runner
	if runner == nil {
		runner = NewRunner(root, opts.CommandTimeout)
	}
	nativeGCC := opts.NativeGCC
	if nativeGCC == nil {
		nativeGCC = DefaultNativeGCC
	}
	crossGCC := opts.CrossGCC
	if crossGCC == nil {
		crossGCC = DefaultCrossGCC
	}

	var res Result
	if err := probeNative(ctx, fsys, runner, nativeGCC, opts.HWProbe, &res); err != nil {
		return Result{}, err
	}
	if err := probeEmulated(ctx, fsys, runner, crossGCC, opts.Emulator, &res); err != nil {
		return Result{}, err
	}
	return res, nil
}

func probeNative(ctx context.Context, fsys fs.FS, runner Runner, gccPaths []string, hwprobe func() ([]HWProbePair, error), res *Result) error {
	data, err := fs.ReadFile(fsys, "proc/cpuinfo")
	if err != nil {
		return sourceErr(SourceCPUInfo, fmt.Errorf("read /proc/cpuinfo of the host root: %w", err))
	}
	ci, err := fromCPUInfo(parseCPUInfo(data))
	if err != nil {
		return sourceErr(SourceCPUInfo, fmt.Errorf("parse /proc/cpuinfo: %w", err))
	}

	// hwprobe (linux/riscv64 builds): hardware, like cpuinfo.
	var (
		hw       isa.ISA
		hwFound  bool
		hwReport = "hwprobe: not available on this build"
	)
	if hwprobe != nil {
		var failed bool
		hwReport, hw, hwFound, failed = runHWProbe(hwprobe, ci)
		if failed {
			res.Failed = append(res.Failed, SourceHWProbe)
		}
	}

	// gcc: reported always, decisive only when no hardware source knows a
	// RISC-V ISA.
	gccMarch, gccISA, gccReport, gccFailed := runNativeGCC(ctx, runner, gccPaths)
	if gccFailed {
		res.Failed = append(res.Failed, SourceGCC)
	}

	var decided string
	switch {
	case ci.found && hwFound:
		u, err := isa.Union(ci.native, hw)
		if err != nil {
			return sourceErr(SourceHWProbe, fmt.Errorf("combine cpuinfo and hwprobe: %w", err))
		}
		res.Native, res.Hints = u, ci.hints
		decided = fmt.Sprintf("decided by cpuinfo (%s) and hwprobe: %s", ci.detail, u.Short())
	case ci.found:
		res.Native, res.Hints = ci.native, ci.hints
		decided = fmt.Sprintf("decided by cpuinfo (%s): %s", ci.detail, ci.native.Short())
	case hwFound:
		res.Native = hw
		decided = fmt.Sprintf("decided by hwprobe: %s", hw.Short())
	case gccISA != nil && isRISCV(gccISA.Arch):
		res.Native = *gccISA
		decided = fmt.Sprintf("decided by gcc -march=%s (cpuinfo has no RISC-V isa line): %s", gccMarch, gccISA.Short())
		gccReport = ""
	default:
		return sourceErr(SourceCPUInfo, fmt.Errorf("no ISA in /proc/cpuinfo of the host root (no riscv isa, x86 flags or arm64 Features line) and no RISC-V gcc: %s", gccReport))
	}
	parts := []string{decided}
	if hwprobe != nil {
		parts = append(parts, hwReport)
	}
	if gccReport != "" {
		if gccISA != nil && (ci.found || hwFound) {
			gccReport = gccVerdict(gccReport, res.Native, *gccISA)
		}
		parts = append(parts, gccReport)
	}
	res.NativeSource = strings.Join(parts, "; ")
	return nil
}

// runHWProbe asks hwprobe; failed is true when it answered nothing usable.
func runHWProbe(hwprobe func() ([]HWProbePair, error), ci cpuinfoResult) (report string, i isa.ISA, found, failed bool) {
	pairs, err := hwprobe()
	if err != nil {
		return fmt.Sprintf("hwprobe: %v", err), isa.ISA{}, false, true
	}
	xlen := 64
	if ci.found && ci.native.Arch == isa.RISCV32 {
		xlen = 32
	}
	s, hints, ok := HWProbeString(pairs, xlen)
	if !ok {
		return "hwprobe: no IMA base behaviour reported", isa.ISA{}, false, true
	}
	if ci.found {
		hints = ci.hints
	}
	i, err = isa.ParseCPUInfoRISCV(s, hints)
	if err != nil {
		return fmt.Sprintf("hwprobe: %s: %v", s, err), isa.ISA{}, false, true
	}
	if ci.found && ci.native.Arch != i.Arch {
		return fmt.Sprintf("hwprobe: %s (ignored: cpuinfo says %s)", s, ci.native.Arch), isa.ISA{}, false, false
	}
	return "hwprobe: " + s, i, true, false
}

// helpTargetArgs ask gcc for its target defaults. The paper runs
// "gcc -c -Q --help=target", but with -c gcc assembles a dummy into
// help-dummy.o in its working directory: on a node that is the read-only host
// root, and gcc exits 1 ("can't create help-dummy.o: Read-only file system").
// Without -c it prints the same -march= line and writes nothing.
var helpTargetArgs = []string{"-Q", "--help=target"}

// runNativeGCC runs the first gcc found; report is "gcc: none" when none
// exists, failed is true when one exists but did not answer.
func runNativeGCC(ctx context.Context, runner Runner, paths []string) (march string, parsed *isa.ISA, report string, failed bool) {
	for _, p := range paths {
		out, err := runner.Run(ctx, p, helpTargetArgs...)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", nil, fmt.Sprintf("gcc %s: %v", p, err), true
		}
		march = marchFromHelpTarget(out)
		if march == "" {
			return "", nil, fmt.Sprintf("gcc %s: no -march= line", p), true
		}
		i, err := parseMarch(march)
		if err != nil {
			return march, nil, fmt.Sprintf("gcc %s -march=%s (not an ISA isamatch reads, not used)", p, march), false
		}
		return march, &i, fmt.Sprintf("gcc %s -march=%s", p, march), false
	}
	return "", nil, "gcc: none", false
}

// gccVerdict says whether the compiler default is within the native ISA
// (agrees) or wider (ignored: the compiler never widens the hardware).
func gccVerdict(report string, native, gcc isa.ISA) string {
	switch {
	case native.Arch != gcc.Arch:
		return report + " (other architecture, not used)"
	case isa.Satisfies(native, gcc):
		return report + " (within native, not used)"
	default:
		return report + " (ignored, hardware decides; would add " + strings.Join(isa.Missing(native, gcc), ",") + ")"
	}
}

// parseMarch reads a gcc -march value: RISC-V strings with GCC's spelling
// rules, anything else ("x86-64", "armv8-a") as isamatch's strict syntax.
func parseMarch(march string) (isa.ISA, error) {
	if strings.HasPrefix(march, "rv") {
		return isa.ParseGCCMarch(march)
	}
	return isa.Parse(march)
}

func isRISCV(a isa.Arch) bool { return a == isa.RISCV64 || a == isa.RISCV32 }

func probeEmulated(ctx context.Context, fsys fs.FS, runner Runner, crossPaths []string, em *Emulator, res *Result) error {
	byArch := map[isa.Arch]isa.ISA{}
	add := func(source string, i isa.ISA) error {
		if cur, ok := byArch[i.Arch]; ok {
			u, err := isa.Union(cur, i)
			if err != nil {
				return sourceErr(source, fmt.Errorf("union emulated %s: %w", i.Arch, err))
			}
			i = u
		}
		byArch[i.Arch] = i
		return nil
	}
	var parts []string
	for _, p := range crossPaths {
		report, isas, failed := runCrossGCC(ctx, runner, p)
		if report == "" {
			continue
		}
		if failed && !slices.Contains(res.Failed, SourceCrossGCC) {
			res.Failed = append(res.Failed, SourceCrossGCC)
		}
		parts = append(parts, report)
		for _, i := range isas {
			if err := add(SourceCrossGCC, i); err != nil {
				return err
			}
		}
	}
	st, err := readBinfmt(fsys)
	if err != nil {
		return sourceErr(SourceBinfmt, err)
	}
	if st.globalOff && len(st.entries) > 0 {
		res.EmuProblems = append(res.EmuProblems, "binfmt_misc is disabled on the host (its status is \"disabled\"): no handler runs anything; no emulation labels (echo 1 > /proc/sys/fs/binfmt_misc/status)")
	}
	for _, e := range st.entries {
		arch, known := BinfmtArch(e.name)
		switch {
		case !known:
			if e.enabled {
				parts = append(parts, "binfmt "+e.name+" enabled (no isamatch architecture)")
			}
			continue
		case !e.enabled:
			parts = append(parts, "binfmt "+e.name+" disabled")
			if !st.globalOff {
				res.EmuProblems = append(res.EmuProblems, fmt.Sprintf("binfmt_misc handler %s is disabled: no %s emulation labels (echo 1 > /proc/sys/fs/binfmt_misc/%s)", e.name, arch, e.name))
			}
			continue
		}
		out := em.probeHandler(ctx, runner, fsys, e, arch)
		parts = append(parts, out.report)
		if !out.ok {
			res.EmuProblems = append(res.EmuProblems, out.problem)
			continue
		}
		r := out.result
		res.EmuDefault = append(res.EmuDefault, r.def)
		if r.qemuCPU != "" {
			if res.QEMUCPU == nil {
				res.QEMUCPU = map[isa.Arch]string{}
			}
			res.QEMUCPU[arch] = r.qemuCPU
		}
		if err := add(SourceBinfmt, r.best); err != nil {
			return err
		}
	}
	archs := make([]string, 0, len(byArch))
	for a := range byArch {
		archs = append(archs, string(a))
	}
	sort.Strings(archs)
	for _, a := range archs {
		res.Emulated = append(res.Emulated, byArch[isa.Arch(a)])
	}
	switch {
	case len(parts) > 0:
		res.EmuSource = strings.Join(parts, "; ")
	case !st.mounted:
		res.EmuSource = "none: no cross gcc, binfmt_misc not mounted"
	default:
		res.EmuSource = "none: no cross gcc, no qemu binfmt_misc entry"
	}
	return nil
}

// runCrossGCC asks a cross gcc for its default ISA both ways the paper
// does. report is "" when the compiler does not exist; failed is true when
// a question failed or its answer was not understood.
func runCrossGCC(ctx context.Context, runner Runner, p string) (report string, isas []isa.ISA, failed bool) {
	vout, verr := runner.Run(ctx, p, "-v")
	if errors.Is(verr, ErrNotFound) {
		return "", nil, false
	}
	var said []string
	if verr != nil {
		said = append(said, fmt.Sprintf("-v failed: %v", verr))
		failed = true
	} else if wa := withArchFromVersion(vout); wa != "" {
		if i, err := isa.ParseGCCMarch(wa); err != nil {
			said = append(said, fmt.Sprintf("--with-arch=%s (not understood: %v)", wa, err))
			failed = true
		} else {
			said = append(said, "--with-arch="+wa)
			isas = append(isas, i)
		}
	} else {
		said = append(said, "no --with-arch")
	}
	qout, qerr := runner.Run(ctx, p, helpTargetArgs...)
	if qerr != nil {
		said = append(said, fmt.Sprintf("-Q --help=target failed: %v", qerr))
		failed = true
	} else if m := marchFromHelpTarget(qout); m != "" {
		if i, err := isa.ParseGCCMarch(m); err != nil {
			said = append(said, fmt.Sprintf("-march=%s (not understood: %v)", m, err))
			failed = true
		} else {
			said = append(said, "-march="+m)
			isas = append(isas, i)
		}
	}
	return fmt.Sprintf("cross gcc %s: %s", p, strings.Join(said, ", ")), isas, failed
}
