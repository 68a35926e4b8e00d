// SVE: a predicated add over all lanes, the last lane read back.
	.arch armv8.2-a+sve
	.text
	.globl _start
_start:
	ptrue p0.s
	mov z0.s, #3
	add z1.s, z0.s, z0.s
	lastb w1, p0, z1.s
	cmp w1, #6
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
