# SHA: sha1nexte executes (the round constants are checked by sha1msg1 of zeros being zero).
	.text
	.globl _start
_start:
	pxor %xmm0, %xmm0
	pxor %xmm1, %xmm1
	sha1msg1 %xmm1, %xmm0
	sha256msg1 %xmm1, %xmm0
	ptest %xmm0, %xmm0
	jnz fail
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
