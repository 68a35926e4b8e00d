//go:build !(linux && riscv64)

package probe

import "errors"

// SystemHWProbe is only implemented on linux/riscv64 builds.
func SystemHWProbe() ([]HWProbePair, error) {
	return nil, errors.New("riscv_hwprobe: not available on this build")
}

// HWProbeAvailable reports whether this build can call riscv_hwprobe.
const HWProbeAvailable = false
