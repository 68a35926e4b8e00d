// LSE atomics: ldadd.
	.arch armv8.1-a
	.text
	.globl _start
_start:
	adr x2, cell
	mov w3, #5
	ldadd w3, w4, [x2]
	cmp w4, #1
	b.ne fail
	ldr w5, [x2]
	cmp w5, #6
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
	.data
	.balign 4
cell:	.word 1
