// Package probes builds the labeler's probe programs from the assembly
// sources beside it: <arch>/<name>.s becomes the static program
// <arch>/<name>, which executes what <name> stands for (pkg/probe's
// ProgramISA gives the rule), checks the result and exits 0, or exits 1 on
// a wrong result; an instruction the CPU does not have kills it with
// SIGILL. The labeler runs them through the host's QEMU binfmt_misc
// handlers (pkg/probe.Emulator).
//
// The entry point is [Build]; it needs Debian's cross binutils
// (binutils-riscv64-linux-gnu, binutils-aarch64-linux-gnu,
// binutils-x86-64-linux-gnu; hack/deps.sh installs them). Instructions the
// assembler of Debian 12 (binutils 2.40) does not know are written as
// .insn or raw words, each with its encoding explained.
package probes
