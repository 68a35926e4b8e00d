# Zbs: bset.
	.text
	.globl _start
	.option arch, +zbs
_start:
	li t0, 3
	bset a0, zero, t0
	li a1, 8
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
