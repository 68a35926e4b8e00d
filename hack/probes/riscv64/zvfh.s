# Zvfh: a vector half-precision add (vfadd.vv at SEW=16).
	.text
	.globl _start
	.option arch, +v, +zfhmin
_start:
	li t0, 3
	fcvt.s.w ft0, t0
	fcvt.h.s ft1, ft0
	li t0, 4
	vsetvli t1, t0, e16, m1, ta, ma
	vfmv.v.f v1, ft1
	vfadd.vv v2, v1, v1
	vfmv.f.s ft2, v2
	fcvt.s.h ft3, ft2
	fcvt.w.s a0, ft3
	li a1, 6
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
