# rv64gc: the baseline, one instruction of each of M, A, F, D and C.
	.text
	.globl _start
_start:
	li t0, 6
	li t1, 7
	mul t2, t0, t1
	li t3, 42
	bne t2, t3, fail
	la t4, word
	li t5, 5
	amoadd.w t6, t5, (t4)
	lw a1, 0(t4)
	li a2, 6
	bne a1, a2, fail
	fcvt.d.l ft0, t0
	fadd.d ft1, ft0, ft0
	fcvt.l.d a3, ft1
	li a4, 12
	bne a3, a4, fail
	c.li a5, 3
	c.add a5, a5
	li a6, 6
	bne a5, a6, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
	.data
	.balign 4
word:	.word 1
