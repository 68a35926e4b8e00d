# Zba: sh1add.
	.text
	.globl _start
	.option arch, +zba
_start:
	li t0, 3
	li t1, 4
	sh1add a0, t0, t1
	li a1, 10
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
