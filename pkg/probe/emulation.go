package probe

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/isamatch/isamatch/pkg/isa"
)

// ProgramExec runs the probe program <arch>/<name> so that the kernel hands
// it to the binfmt_misc handler registered for it, with env as its whole
// environment, and returns nil only when it exited 0.
type ProgramExec func(ctx context.Context, program string, env []string) error

// DefaultEmulationBudget bounds the probing of one handler, every run of
// every probe program under every QEMU_CPU tried.
const DefaultEmulationBudget = 2 * time.Minute

// Emulator finds out what the host's QEMU user-mode binfmt_misc handlers
// really execute by running probe programs through them ([ProgramISA] says
// what each proves), first with an empty environment (QEMU's default CPU),
// then with the QEMU_CPU values the handler's QEMU accepts, and remembers
// the outcome per handler: its interpreter path and the SHA-256 of that
// file in the host root. A new QEMU is a new handler; an unchanged one is
// not run again.
//
// QEMU_CPU values are found by trying, not from a table of QEMU releases:
// each base model ("max", then "rv64" for riscv64) that "<interpreter> -cpu
// help" lists (all of them when it cannot be asked), and for a riscv64 probe
// program that the model does not run, the property spellings QEMU has used
// for its extension (zba, Zba, x-zba) set to true, one at a time; a
// property is kept when the program then runs and the baseline still does.
// The value that runs the most programs, and more than the default CPU,
// is the handler's QEMU_CPU.
type Emulator struct {
	// Programs holds the probe programs, <arch>/<name>.
	Programs fs.FS
	// Exec runs a program of Programs through the kernel's binfmt_misc.
	Exec ProgramExec
	// Budget bounds the probing of one handler; zero means
	// DefaultEmulationBudget.
	Budget time.Duration

	mu       sync.Mutex
	handlers map[string]handlerResult // by interpreter and digest
	digests  digestMemo
}

// maxHandlers bounds the handlers an Emulator remembers; past it the memo
// starts again.
const maxHandlers = 32

// handlerResult is what one handler runs.
type handlerResult struct {
	arch isa.Arch
	// def is what it runs with the default CPU, best what it runs under
	// qemuCPU ("" when no QEMU_CPU runs more: best is def).
	def, best isa.ISA
	qemuCPU   string
	// defRan, bestRan and notRun name probe programs.
	defRan, bestRan, notRun []string
}

// handlerOutcome is one handler's part of a probe: what it runs (ok), or
// the problem that keeps it from being used, and the report line either
// way.
type handlerOutcome struct {
	result  handlerResult
	ok      bool
	report  string
	problem string
}

// probeHandler probes one enabled qemu-* entry of an architecture isamatch
// models.
func (em *Emulator) probeHandler(ctx context.Context, host Runner, hostFS fs.FS, e binfmtEntry, arch isa.Arch) handlerOutcome {
	name := "binfmt " + e.name
	if !e.fixBinary() {
		return handlerOutcome{report: name + " enabled without the F flag: not usable in containers",
			problem: fmt.Sprintf("binfmt_misc handler %s has no F flag: the kernel looks its interpreter %s up in each container's own file system, where it is not, so containers cannot run %s programs through it; no %s emulation labels (register it with the F flag, as Debian's qemu-user-static does through systemd-binfmt)",
				e.name, e.interpreter, arch, arch)}
	}
	if em == nil || em.Programs == nil || em.Exec == nil {
		return handlerOutcome{report: name + " enabled: not probed (no probe programs)",
			problem: fmt.Sprintf("binfmt_misc handler %s is enabled but the labeler has no probe programs to run through it: no %s emulation labels (the labeler image ships them in %s)", e.name, arch, DefaultProgramsDir)}
	}
	programs, err := listPrograms(em.Programs, arch)
	if err != nil || len(programs) == 0 {
		why := "none in the labeler image"
		if err != nil {
			why = err.Error()
		}
		return handlerOutcome{report: name + " enabled: not probed (no " + string(arch) + " probe programs)",
			problem: fmt.Sprintf("binfmt_misc handler %s is enabled but there are no %s probe programs to run through it (%s): no %s emulation labels", e.name, arch, why, arch)}
	}
	digest, digestNote := em.digests.of(hostFS, e.interpreter)
	id := fmt.Sprintf("%s (interpreter %s, flags %s, %s)", name, e.interpreter, e.flags, digestNote)
	key := e.interpreter + "@" + digest
	if digest != "" {
		em.mu.Lock()
		r, ok := em.handlers[key]
		em.mu.Unlock()
		if ok {
			return handlerOutcome{result: r, ok: true, report: id + ": " + r.summary() + " (remembered)"}
		}
	}
	budget := em.Budget
	if budget <= 0 {
		budget = DefaultEmulationBudget
	}
	bctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	r, err := em.run(bctx, host, e.interpreter, arch, programs)
	if err != nil {
		return handlerOutcome{report: id + ": " + err.Error(),
			problem: fmt.Sprintf("binfmt_misc handler %s (%s): %v; no %s emulation labels", e.name, e.interpreter, err, arch)}
	}
	if digest != "" {
		em.mu.Lock()
		if em.handlers == nil || len(em.handlers) >= maxHandlers {
			em.handlers = map[string]handlerResult{}
		}
		em.handlers[key] = r
		em.mu.Unlock()
	}
	return handlerOutcome{result: r, ok: true, report: id + ": " + r.summary()}
}

// run probes a handler: the default CPU, then every QEMU_CPU candidate.
func (em *Emulator) run(ctx context.Context, host Runner, interpreter string, arch isa.Arch, programs []string) (handlerResult, error) {
	r := handlerResult{arch: arch}
	defRan, baseErr := em.runAll(ctx, programs, arch, []string{})
	if baseErr != nil {
		return r, fmt.Errorf("the baseline probe %s/%s did not run with the default CPU: %w", arch, BaseProgram, baseErr)
	}
	r.defRan, r.bestRan = defRan, defRan
	for _, base := range cpuBases(ctx, host, interpreter, arch) {
		value, ran := em.tryBase(ctx, arch, programs, base)
		if len(ran) > len(r.bestRan) && isSuperset(ran, defRan) {
			r.qemuCPU, r.bestRan = value, ran
		}
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("probing took longer than its budget: %w", ctx.Err())
	}
	var err error
	if r.def, err = ranISA(arch, r.defRan); err != nil {
		return r, err
	}
	if r.best, err = ranISA(arch, r.bestRan); err != nil {
		return r, err
	}
	for _, p := range programs {
		if !slices.Contains(r.bestRan, p) {
			r.notRun = append(r.notRun, p)
		}
	}
	return r, nil
}

// tryBase finds the best QEMU_CPU value starting from the model base: ran
// is nil when the model does not run the baseline.
func (em *Emulator) tryBase(ctx context.Context, arch isa.Arch, programs []string, base string) (value string, ran []string) {
	value = base
	if em.runs(ctx, arch, BaseProgram, value) != nil {
		return "", nil
	}
	ran, _ = em.runAll(ctx, programs, arch, cpuEnv(value))
	grew := false
	for _, p := range programs {
		if slices.Contains(ran, p) || (grew && em.runs(ctx, arch, p, value) == nil) {
			continue // runs already, maybe through a property added before (zfh gives zfhmin)
		}
		for _, prop := range cpuProperties(arch, p) {
			cand := value + "," + prop + "=true"
			if em.runs(ctx, arch, p, cand) == nil && em.runs(ctx, arch, BaseProgram, cand) == nil {
				value, grew = cand, true
				break
			}
		}
	}
	if grew {
		// Properties can interact: what counts is what the final value runs.
		ran, _ = em.runAll(ctx, programs, arch, cpuEnv(value))
	}
	if !slices.Contains(ran, BaseProgram) {
		return "", nil
	}
	return value, ran
}

// runAll runs every program with env and returns those that ran; baseErr
// is why BaseProgram did not.
func (em *Emulator) runAll(ctx context.Context, programs []string, arch isa.Arch, env []string) (ran []string, baseErr error) {
	for _, p := range programs {
		err := em.Exec(ctx, string(arch)+"/"+p, env)
		switch {
		case err == nil:
			ran = append(ran, p)
		case p == BaseProgram:
			baseErr = err
		}
	}
	return ran, baseErr
}

// runs runs one program under QEMU_CPU=value.
func (em *Emulator) runs(ctx context.Context, arch isa.Arch, program, value string) error {
	return em.Exec(ctx, string(arch)+"/"+program, cpuEnv(value))
}

func cpuEnv(value string) []string { return []string{isa.QEMUCPUEnv + "=" + value} }

// cpuBaseModels are the QEMU CPU models a QEMU_CPU value starts from, best
// first: "max" has every extension the release emulates (QEMU 8.1 and
// later for RISC-V); "rv64" is the generic RISC-V CPU whose extensions
// are properties.
var cpuBaseModels = map[isa.Arch][]string{
	isa.RISCV64: {"max", "rv64"},
	isa.AMD64:   {"max"},
	isa.ARM64:   {"max"},
}

// maxCPUHelp bounds what "-cpu help" may print.
const maxCPUHelp = 64 << 10

// cpuBases are the base models of arch that the interpreter lists in its
// "-cpu help", or all of them when it cannot be asked: the interpreter is
// not in the host root the labeler sees, or it is one of Debian's
// "-binfmt-P" names, which take their first argument as the program to
// run (the P flag's convention) and so answer no "-cpu help". A model
// that does not exist then fails its first run, which costs one run.
func cpuBases(ctx context.Context, host Runner, interpreter string, arch isa.Arch) []string {
	bases := cpuBaseModels[arch]
	if host == nil || interpreter == "" {
		return bases
	}
	out, err := host.Run(ctx, interpreter, "-cpu", "help")
	if err != nil || len(out) > maxCPUHelp {
		return bases
	}
	listed := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		listed[f] = true
	}
	var have []string
	for _, b := range bases {
		if listed[b] {
			have = append(have, b)
		}
	}
	return have
}

// cpuProperties are the QEMU -cpu property spellings that have enabled a
// RISC-V extension over the releases: lower case (QEMU 8.2 and later, and
// most Z extensions since 6.x), capitalised (Zfh, Zfhmin, Zicsr before
// 8.2), and experimental "x-" (before ratification).
func cpuProperties(arch isa.Arch, program string) []string {
	if arch != isa.RISCV64 || program == BaseProgram {
		return nil
	}
	if len(program) == 1 {
		return []string{program}
	}
	return []string{program, strings.ToUpper(program[:1]) + program[1:], "x-" + program}
}

func isSuperset(a, b []string) bool {
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// summary is the report of a handler's result.
func (r handlerResult) summary() string {
	s := "default CPU ran " + strings.Join(r.defRan, ",") + " (" + r.def.Short() + ")"
	if r.qemuCPU != "" {
		var more []string
		for _, p := range r.bestRan {
			if !slices.Contains(r.defRan, p) {
				more = append(more, p)
			}
		}
		s += "; " + isa.QEMUCPUEnv + "=" + r.qemuCPU + " also ran " + strings.Join(more, ",")
	}
	if len(r.notRun) > 0 {
		s += "; not run: " + strings.Join(r.notRun, ",")
	}
	return s
}

// ExecPrograms is the ProgramExec that runs <dir>/<program> with r (whose
// Root the path is inside), with env as its whole environment: run by
// the labeler, as r's Credential, the kernel hands the program to the
// binfmt_misc handler of its architecture.
func ExecPrograms(r *ExecRunner, dir string) ProgramExec {
	return func(ctx context.Context, program string, env []string) error {
		_, err := r.RunEnv(ctx, env, path.Join(dir, program))
		return err
	}
}
