# x86-64 (v1): an SSE2 add.
	.text
	.globl _start
_start:
	movq $3, %rax
	movq %rax, %xmm0
	paddq %xmm0, %xmm0
	movq %xmm0, %rbx
	cmpq $6, %rbx
	jne fail
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
