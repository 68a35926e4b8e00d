// AES: aese of zeros with a zero key is 0x63 in every byte.
	.arch armv8-a+aes
	.text
	.globl _start
_start:
	movi v0.16b, #0
	movi v1.16b, #0
	aese v0.16b, v1.16b
	umov w1, v0.s[0]
	ldr w2, =0x63636363
	cmp w1, w2
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
