# PCLMULQDQ: 3 x 3 carry-less is 5.
	.text
	.globl _start
_start:
	movq $3, %rax
	movq %rax, %xmm0
	pclmulqdq $0, %xmm0, %xmm0
	movq %xmm0, %rbx
	cmpq $5, %rbx
	jne fail
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
