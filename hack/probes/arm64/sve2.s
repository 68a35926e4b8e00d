// SVE2: eor3 (1 ^ 2 ^ 4 is 7).
	.arch armv8.5-a+sve2
	.text
	.globl _start
_start:
	ptrue p0.d
	mov z0.d, #1
	mov z1.d, #2
	mov z2.d, #4
	eor3 z0.d, z0.d, z1.d, z2.d
	lastb x1, p0, z0.d
	cmp x1, #7
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
