# Zfa: fli.s ft0, 2.0 (table entry 20), encoded with .insn: binutils 2.40 has no Zfa.
	.text
	.globl _start
_start:
	.insn r 0x53, 0, 0x78, ft0, x20, x1
	fcvt.w.s a0, ft0
	li a1, 2
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
