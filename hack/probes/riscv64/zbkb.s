# Zbkb: pack (the low halves of two registers).
	.text
	.globl _start
	.option arch, +zbkb
_start:
	li t0, 1
	li t1, 2
	pack a0, t0, t1
	li a1, 0x200000001
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
