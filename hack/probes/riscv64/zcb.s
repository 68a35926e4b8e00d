# Zcb: c.not a0 (0x9d75), encoded with .2byte: binutils 2.40 has no Zcb.
	.text
	.globl _start
_start:
	li a0, 5
	.2byte 0x9d75
	li a1, -6
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
