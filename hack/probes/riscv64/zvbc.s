# Zvbc: vclmul.vv on SEW=64 (3 x 3 carry-less is 5), encoded as .4byte.
	.text
	.globl _start
	.option arch, +v
_start:
	li t0, 2
	vsetvli t1, t0, e64, m1, ta, ma
	vmv.v.i v1, 3
	# vclmul.vv v2, v1, v1 (.4byte: .insn r takes no vector registers): funct6 001100, vm 1, OPMVV
	.4byte 0x3210a157
	vmv.x.s a0, v2
	li a1, 5
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
