/*
 * sigill executes one instruction of the x86-64 extension named by its
 * argument (a /proc/cpuinfo flag). On a CPU without that extension the
 * instruction is undefined and the kernel kills the process with SIGILL,
 * exactly as a binary built for a richer CPU dies on a poorer one. The node
 * suite builds it with the host's gcc (static, so the image needs nothing
 * else) and runs it with a flag this node lacks.
 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
	const char *ext = argc > 1 ? argv[1] : "";
	if (strcmp(ext, "amx_tile") == 0) {
		__asm__ volatile("tilerelease");
	} else if (strcmp(ext, "avx512_fp16") == 0) {
		__asm__ volatile("vaddph %%zmm0, %%zmm0, %%zmm0" ::: "xmm0");
	} else if (strcmp(ext, "avx_vnni") == 0) {
		__asm__ volatile("%{vex%} vpdpbusd %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");
	} else if (strcmp(ext, "avx512f") == 0) {
		__asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0" ::: "xmm0");
	} else {
		fprintf(stderr, "sigill: unknown extension %s (want amx_tile, avx512_fp16, avx_vnni or avx512f)\n", ext);
		return 2;
	}
	printf("sigill: this CPU executed an %s instruction\n", ext);
	return 0;
}
