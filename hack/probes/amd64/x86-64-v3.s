# x86-64-v3: AVX2 vpaddd on ymm, FMA, BMI1 andn, BMI2 shlx, LZCNT, MOVBE, F16C.
	.text
	.globl _start
_start:
	movl $3, %eax
	vmovd %eax, %xmm0
	vpbroadcastd %xmm0, %ymm0
	vpaddd %ymm0, %ymm0, %ymm1
	vextracti128 $1, %ymm1, %xmm2
	vmovd %xmm2, %ebx
	cmpl $6, %ebx
	jne fail
	vcvtdq2ps %xmm0, %xmm3
	vfmadd231ps %xmm3, %xmm3, %xmm3
	vcvtps2ph $0, %xmm3, %xmm4
	vcvtph2ps %xmm4, %xmm5
	vcvtps2dq %xmm5, %xmm5
	vmovd %xmm5, %ebx
	cmpl $12, %ebx
	jne fail
	movl $12, %eax
	movl $5, %ecx
	andnl %eax, %ecx, %ebx
	cmpl $8, %ebx
	jne fail
	movl $1, %ecx
	shlxl %ecx, %eax, %ebx
	cmpl $24, %ebx
	jne fail
	lzcntl %ecx, %ebx
	cmpl $31, %ebx
	jne fail
	leaq cell(%rip), %rsi
	movbel (%rsi), %ebx
	cmpl $0x01000000, %ebx
	jne fail
	vzeroupper
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
	.data
cell:	.long 1
