// SHA2: sha256su0 of zeros is zero.
	.arch armv8-a+sha2
	.text
	.globl _start
_start:
	movi v0.16b, #0
	movi v1.16b, #0
	sha256su0 v0.4s, v1.4s
	umov x1, v0.d[0]
	cbnz x1, fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
