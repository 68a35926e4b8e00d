# AES-NI: one aesenc round is a defined, nonzero result.
	.text
	.globl _start
_start:
	pxor %xmm0, %xmm0
	pxor %xmm1, %xmm1
	aesenc %xmm1, %xmm0
	movd %xmm0, %ebx
	cmpl $0x63636363, %ebx
	jne fail
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
