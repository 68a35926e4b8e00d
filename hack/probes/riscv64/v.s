# V: vsetvli at SEW=32 takes 4 elements (VLEN >= 128), a vector add, the sum read back.
	.text
	.globl _start
	.option arch, +v
_start:
	li t0, 4
	vsetvli t1, t0, e32, m1, ta, ma
	bne t1, t0, fail
	vmv.v.i v1, 3
	vadd.vv v2, v1, v1
	vmv.x.s a0, v2
	li a1, 6
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
