package engine

import "github.com/isamatch/isamatch/pkg/isa"

// emulatedAlt is the emulation alternative for emulating q with an image
// platform n: an image built for q's own architecture runs through the
// emulator (a riscv64 image under qemu-riscv64 on an x86 node), so the
// node must execute q's architecture through a QEMU handler (not merely
// cross-compile for it) and emulate what both q and the platform need, and
// nothing natively; an image of another architecture runs natively beside
// it (an amd64 image that starts riscv64 programs or cross-compiles).
func emulatedAlt(q isa.ISA, n alt) emuAlt {
	if n.isa.Arch != q.Arch {
		return emuAlt{q: q, native: n}
	}
	if u, ok := both(alt{isa: q}, n); ok {
		return emuAlt{q: u.isa, exec: true}
	}
	return emuAlt{q: q, exec: true}
}
