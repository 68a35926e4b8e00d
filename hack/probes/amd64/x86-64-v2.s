# x86-64-v2: POPCNT, SSE4.2 crc32, SSSE3 pshufb, SSE4.1 pmulld, SSE3 haddpd, LAHF and CMPXCHG16B.
	.text
	.globl _start
_start:
	movq $0xff, %rax
	popcntq %rax, %rbx
	cmpq $8, %rbx
	jne fail
	xorl %ecx, %ecx
	movb $1, %dl
	crc32b %dl, %ecx
	cmpl $0xf26b8303, %ecx
	jne fail
	movq $3, %rax
	movq %rax, %xmm0
	pxor %xmm1, %xmm1
	pshufb %xmm1, %xmm0
	movd %xmm0, %ebx
	cmpl $0x03030303, %ebx
	jne fail
	movq %rax, %xmm2
	pmulld %xmm2, %xmm2
	movd %xmm2, %ebx
	cmpl $9, %ebx
	jne fail
	haddpd %xmm1, %xmm1
	lahf
	leaq cell(%rip), %rsi
	xorl %eax, %eax
	xorl %edx, %edx
	movq $7, %rbx
	xorl %ecx, %ecx
	lock cmpxchg16b (%rsi)
	jne fail
	cmpq $7, (%rsi)
	jne fail
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
	.data
	.balign 16
cell:	.quad 0, 0
