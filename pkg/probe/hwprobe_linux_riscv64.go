//go:build linux && riscv64

package probe

import (
	"fmt"
	"syscall"
	"unsafe"
)

// sysRISCVHWProbe is __NR_riscv_hwprobe (Linux 6.4+).
const sysRISCVHWProbe = 258

// SystemHWProbe asks the running kernel for [HWProbeKeys] over all CPUs
// (the kernel answers with what every CPU has). It returns an error on
// kernels without the syscall (ENOSYS before 6.4).
func SystemHWProbe() ([]HWProbePair, error) {
	pairs := make([]HWProbePair, len(HWProbeKeys))
	for i, k := range HWProbeKeys {
		pairs[i].Key = k
	}
	_, _, errno := syscall.Syscall6(sysRISCVHWProbe,
		uintptr(unsafe.Pointer(&pairs[0])), uintptr(len(pairs)), 0, 0, 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("riscv_hwprobe: %w", errno)
	}
	return pairs, nil
}

// HWProbeAvailable reports whether this build can call riscv_hwprobe.
const HWProbeAvailable = true
