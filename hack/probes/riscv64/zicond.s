# Zicond: czero.eqz keeps rs1 when rs2 != 0 and gives 0 when rs2 == 0 (encoded with .insn).
	.text
	.globl _start
_start:
	li t0, 7
	li t1, 1
	.insn r 0x33, 5, 0x07, a0, t0, t1
	li a1, 7
	bne a0, a1, fail
	.insn r 0x33, 5, 0x07, a0, t0, zero
	bnez a0, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
