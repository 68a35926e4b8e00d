// I8MM: usdot of 1s (four products of 1 x 1 is 4).
	.arch armv8.6-a+i8mm
	.text
	.globl _start
_start:
	movi v0.4s, #0
	movi v1.16b, #1
	movi v2.16b, #1
	usdot v0.4s, v1.16b, v2.16b
	umov w1, v0.s[0]
	cmp w1, #4
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
