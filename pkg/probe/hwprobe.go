package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// HWProbePair is one key/value pair of the riscv_hwprobe(2) syscall
// (struct riscv_hwprobe). A key the running kernel does not know comes back
// as -1.
type HWProbePair struct {
	Key   int64
	Value uint64
}

// riscv_hwprobe keys (arch/riscv/include/uapi/asm/hwprobe.h).
const (
	hwprobeKeyMVendorID      = 0
	hwprobeKeyMArchID        = 1
	hwprobeKeyMImpID         = 2
	hwprobeKeyBaseBehavior   = 3
	hwprobeKeyIMAExt0        = 4
	hwprobeKeyVendorExtTHead = 11

	hwprobeBaseBehaviorIMA = 1 << 0
	hwprobeTHeadVector     = 1 << 0
	theadMVendorID         = 0x5b7
)

// HWProbeKeys are the keys the labeler asks the kernel for.
var HWProbeKeys = []int64{
	hwprobeKeyMVendorID, hwprobeKeyMArchID, hwprobeKeyMImpID,
	hwprobeKeyBaseBehavior, hwprobeKeyIMAExt0, hwprobeKeyVendorExtTHead,
}

// hwprobeExt0 names the bits of RISCV_HWPROBE_KEY_IMA_EXT_0. Only bits 0..58
// are used: they are identical in every kernel tree; bits 59..63 were
// assigned differently by different development trees and are ignored until
// a released kernel settles them. Bit 0 means F and D together.
var hwprobeExt0 = [...]string{
	0: "fd", 1: "c", 2: "v", 3: "zba", 4: "zbb", 5: "zbs", 6: "zicboz", 7: "zbc",
	8: "zbkb", 9: "zbkc", 10: "zbkx", 11: "zknd", 12: "zkne", 13: "zknh", 14: "zksed",
	15: "zksh", 16: "zkt", 17: "zvbb", 18: "zvbc", 19: "zvkb", 20: "zvkg", 21: "zvkned",
	22: "zvknha", 23: "zvknhb", 24: "zvksed", 25: "zvksh", 26: "zvkt", 27: "zfh",
	28: "zfhmin", 29: "zihintntl", 30: "zvfh", 31: "zvfhmin", 32: "zfa", 33: "ztso",
	34: "zacas", 35: "zicond", 36: "zihintpause", 37: "zve32x", 38: "zve32f",
	39: "zve64x", 40: "zve64f", 41: "zve64d", 42: "zimop", 43: "zca", 44: "zcb",
	45: "zcd", 46: "zcf", 47: "zcmop", 48: "zawrs", 49: "supm", 50: "zicntr",
	51: "zihpm", 52: "zfbfmin", 53: "zvfbfmin", 54: "zvfbfwma", 55: "zicbom",
	56: "zaamo", 57: "zalrsc", 58: "zabha",
}

// HWProbeString turns riscv_hwprobe answers into a cpuinfo-style ISA string
// ("rv64imafdcv_zba_zbb_...") plus the vendor hints. xlen is 32 or 64. ok is
// false when the kernel did not report the IMA base behaviour (then the
// extension bits mean nothing).
func HWProbeString(pairs []HWProbePair, xlen int) (s string, hints isa.Hints, ok bool) {
	vals := map[int64]uint64{}
	for _, p := range pairs {
		if p.Key >= 0 {
			vals[p.Key] = p.Value
		}
	}
	if vals[hwprobeKeyBaseBehavior]&hwprobeBaseBehaviorIMA == 0 {
		return "", isa.Hints{}, false
	}
	if v, present := vals[hwprobeKeyMVendorID]; present {
		hints.MVendorID = fmt.Sprintf("%#x", v)
	}
	if v, present := vals[hwprobeKeyMArchID]; present {
		hints.MArchID = fmt.Sprintf("%#x", v)
	}
	ext0 := vals[hwprobeKeyIMAExt0]
	letters := "ima"
	var z, sx []string
	for bit, name := range hwprobeExt0 {
		if ext0&(1<<uint(bit)) == 0 {
			continue
		}
		switch {
		case name == "fd":
			letters += "fd"
		case len(name) == 1:
			// appended below in canonical order
		case strings.HasPrefix(name, "z"):
			z = append(z, name)
		default:
			sx = append(sx, name)
		}
	}
	if ext0&(1<<1) != 0 {
		letters += "c"
	}
	if ext0&(1<<2) != 0 {
		letters += "v"
	}
	if vals[hwprobeKeyMVendorID] == theadMVendorID && vals[hwprobeKeyVendorExtTHead]&hwprobeTHeadVector != 0 {
		sx = append(sx, "xtheadvector")
	}
	sort.Strings(z)
	sort.Strings(sx)
	parts := append([]string{fmt.Sprintf("rv%d%s", xlen, letters)}, append(z, sx...)...)
	return strings.Join(parts, "_"), hints, true
}
