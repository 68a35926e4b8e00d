#!/usr/bin/env bash
# Builds the ELF fixtures of pkg/imageisa from a real toolchain: tiny static
# programs (-nostdlib, a _start that calls exit) whose only interesting part
# is what the compiler, assembler and linker record about the ISA.
#   RISC-V: GCC records -march in .riscv.attributes (Tag_RISCV_arch) and the
#           linker adds a PT_RISCV_ATTRIBUTES segment for it.
#   x86-64: only the linker's -z x86-64-vN writes GNU_PROPERTY_X86_ISA_1_NEEDED
#           (binutils >= 2.36); -march=x86-64-vN alone records nothing, and
#           the assembler's -mx86-used-note=yes writes ISA_1_USED, the level
#           of the instructions it saw.
# Needs gcc-riscv64-linux-gnu and binutils-riscv64-linux-gnu (hack/deps.sh)
# and the host gcc (x86-64). Usage: hack/elf-fixtures.sh [outdir]
# (default pkg/imageisa/testdata/elf). The tests rebuild them the same way
# when the toolchain is present (TestToolchainFixtures).
set -euo pipefail

out=${1:-"$(dirname "$0")/../pkg/imageisa/testdata/elf"}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/rv.c" <<'C'
void _start(void) {
	register long a7 __asm__("a7") = 93; /* exit */
	register long a0 __asm__("a0") = 0;
	__asm__ volatile("ecall" ::"r"(a7), "r"(a0));
	for (;;) {
	}
}
C
cat >"$tmp/x86.c" <<'C'
void _start(void) {
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall"); /* exit */
	for (;;) {
	}
}
C

common=(-static -nostdlib -Os -s -fno-asynchronous-unwind-tables -Wl,--build-id=none -Wl,-n)
rv() { # name march mabi
	riscv64-linux-gnu-gcc -march="$2" -mabi="$3" "${common[@]}" -o "$out/$1" "$tmp/rv.c"
}
x86() { # name flags...
	local name=$1
	shift
	gcc "$@" "${common[@]}" -o "$out/$name" "$tmp/x86.c"
}

# GCC 12 accepts rv64imfd as is (F implies Zicsr in its default ISA spec
# 20191213) and records rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0.
rv riscv64-rv64imfd rv64imfd lp64d
rv riscv64-rv64imfdv rv64imfdv lp64d
rv riscv64-rv64gcv_zba_zbb rv64gcv_zba_zbb lp64d
rv riscv64-rv64gc rv64gc lp64d
rv riscv32-rv32imac rv32imac ilp32
# The same program with its attributes removed: a binary that says nothing.
riscv64-linux-gnu-objcopy -R .riscv.attributes "$out/riscv64-rv64gc" "$out/riscv64-noattr"

x86 amd64-v2 -march=x86-64-v2 -Wl,-z,x86-64-v2
x86 amd64-v3 -march=x86-64-v3 -Wl,-z,x86-64-v3
x86 amd64-v4 -march=x86-64-v4 -Wl,-z,x86-64-v4
x86 amd64-plain -march=x86-64-v3
x86 amd64-used -march=x86-64-v3 -Wa,-mx86-used-note=yes
x86 amd64-v3-used -march=x86-64-v3 -Wa,-mx86-used-note=yes -Wl,-z,x86-64-v3

ls -l "$out" >&2
