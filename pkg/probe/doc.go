// Package probe finds out what instruction sets a Kubernetes node can run,
// natively and under emulation or cross-compilation, by reading the host.
//
// The entry point is [Probe]. Every host access goes through a host root
// (the host's "/" mounted read-only into the labeler pod, "/host" by
// default): files are read through an [fs.FS] rooted there and host
// binaries (gcc, the /opt/RISCV cross gcc) run through a [Runner], so each
// probe runs unchanged against a fixture directory in tests.
//
// Sources, and how they combine:
//
//   - /proc/cpuinfo: RISC-V "isa" / "hart isa" (the node's ISA is the
//     intersection over all harts; "hart isa" is preferred when the kernel
//     prints it), mvendorid/marchid/uarch/cpu-vector as [isa.Hints]; x86
//     "flags"; arm64 "Features". This is hardware: it decides the native ISA.
//   - riscv_hwprobe(2), on linux/riscv64 builds only: hardware too; its
//     extensions are added to what cpuinfo says.
//   - the host's gcc ("gcc -Q --help=target", the -march= line): used for
//     the native ISA only when cpuinfo has no RISC-V ISA at all; otherwise it
//     is only reported. A compiler default never widens the native ISA.
//   - the cross gcc /opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc ("-v"
//     --with-arch= and "-Q --help=target" -march=): the paper's QEMU
//     capability, an emulated/cross ISA.
//   - binfmt_misc qemu-<arch> entries that are enabled and have the F flag:
//     emulated ISAs, found by running probe programs through them with the
//     default CPU and the QEMU_CPU values their QEMU accepts ([Emulator],
//     [ProgramISA]); only what ran counts. [Result.QEMUCPU] is the value to
//     give a process for what Emulated says, [Result.EmuDefault] what runs
//     without it, [Result.EmuProblems] why a handler gives nothing.
//
// [Result] records which source decided and what every source said, and
// turns the outcome into node labels ([Result.Labels]) and annotations
// ([Result.Annotations]).
//
// Host binaries are untrusted input too: an [ExecRunner] refuses a binary
// that it, or a directory above it, lets a non-root user replace
// ([ErrUntrusted]), runs it chrooted into the host root as nobody (65534)
// when the labeler is root, bounds its output and time, and kills and reaps
// its whole process group. [PrepareHostRoot] turns the labeler's /host
// emptyDir, in which only the paths the probes read are mounted, into a
// root gcc can run in; a [Reaper] reaps orphans when the labeler is PID 1.
package probe
