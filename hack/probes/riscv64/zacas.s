# Zacas: amocas.w swaps in 9 where memory holds the expected 1 (encoded with .insn).
	.text
	.globl _start
_start:
	la t4, word
	li a0, 1
	li t5, 9
	# amocas.w a0, t5, (t4): funct5 00101, aq 0, rl 0
	.insn r 0x2f, 2, 0x14, a0, t4, t5
	li a1, 1
	bne a0, a1, fail
	lw a2, 0(t4)
	li a3, 9
	bne a2, a3, fail
	li a0, 0
	li a7, 93
	ecall
fail:
	li a0, 1
	li a7, 93
	ecall
	.data
	.balign 4
word:	.word 1
