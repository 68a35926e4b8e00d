// arm64 (Armv8.0 fp and asimd): a double add and a vector add.
	.arch armv8-a
	.text
	.globl _start
_start:
	fmov d0, #3.0
	fadd d1, d0, d0
	fcvtzs x1, d1
	cmp x1, #6
	b.ne fail
	movi v2.4s, #3
	add v3.4s, v2.4s, v2.4s
	umov w1, v3.s[3]
	cmp w1, #6
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
