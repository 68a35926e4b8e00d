// CRC32: crc32b of the byte 1 from 0.
	.arch armv8-a+crc
	.text
	.globl _start
_start:
	mov w1, #0
	mov w2, #1
	crc32b w1, w1, w2
	ldr w3, =0x77073096
	cmp w1, w3
	b.ne fail
	mov x0, #0
	mov x8, #93
	svc #0
fail:
	mov x0, #1
	mov x8, #93
	svc #0
