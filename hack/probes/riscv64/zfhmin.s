# Zfhmin: single to half and back.
	.text
	.globl _start
	.option arch, +zfhmin
_start:
	li t0, 3
	fcvt.s.w ft0, t0
	fcvt.h.s ft1, ft0
	fcvt.s.h ft2, ft1
	fcvt.w.s a0, ft2
	li a1, 3
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
