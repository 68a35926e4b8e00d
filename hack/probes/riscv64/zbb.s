# Zbb: andn and cpop.
	.text
	.globl _start
	.option arch, +zbb
_start:
	li t0, 15
	li t1, 5
	andn a0, t0, t1
	li a1, 10
	bne a0, a1, fail
	cpop a2, t0
	li a3, 4
	bne a2, a3, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
