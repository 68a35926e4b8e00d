# Zfh: half-precision convert and add.
	.text
	.globl _start
	.option arch, +zfh
_start:
	li t0, 3
	fcvt.h.w ft0, t0
	fadd.h ft1, ft0, ft0
	fcvt.w.h a0, ft1
	li a1, 6
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
