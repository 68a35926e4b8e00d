# x86-64-v4: AVX-512 F (zmm add), BW (vpaddw zmm), DQ (vpmullq), CD (vplzcntd), VL (a masked ymm add).
	.text
	.globl _start
_start:
	movl $3, %eax
	vpbroadcastd %eax, %zmm0
	vpaddd %zmm0, %zmm0, %zmm1
	vextracti32x4 $3, %zmm1, %xmm2
	vmovd %xmm2, %ebx
	cmpl $6, %ebx
	jne fail
	vpaddw %zmm0, %zmm0, %zmm3
	vpmullq %zmm0, %zmm0, %zmm4
	vmovq %xmm4, %rbx
	movabsq $0x0000001200000009, %rcx
	cmpq %rcx, %rbx
	jne fail
	vplzcntd %zmm0, %zmm5
	vmovd %xmm5, %ebx
	cmpl $30, %ebx
	jne fail
	movl $0xff, %eax
	kmovw %eax, %k1
	vpaddd %ymm0, %ymm0, %ymm6{%k1}{z}
	vmovd %xmm6, %ebx
	cmpl $6, %ebx
	jne fail
	vzeroupper
	xorl %edi, %edi
	movl $60, %eax
	syscall
fail:
	movl $1, %edi
	movl $60, %eax
	syscall
