# Zvbb: vclz.v on SEW=32 (clz of 1 is 31), encoded as .4byte.
	.text
	.globl _start
	.option arch, +v
_start:
	li t0, 4
	vsetvli t1, t0, e32, m1, ta, ma
	vmv.v.i v1, 1
	# vclz.v v2, v1 (.4byte: .insn r takes no vector registers): funct6 010010, vm 1, vs2 v1, vs1 01100, OPMVV, vd v2
	.4byte 0x4a162157
	vmv.x.s a0, v2
	li a1, 31
	bne a0, a1, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
