// BF16: bfcvt of 3.0 is 0x4040.
	.arch armv8.6-a+bf16
	.text
	.globl _start
_start:
	fmov s0, #3.0
	bfcvt h1, s0
	umov w1, v1.h[0]
	mov w2, #0x4040
	cmp w1, w2
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
