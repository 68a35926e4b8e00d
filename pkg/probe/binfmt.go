package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// BinfmtDir is where binfmt_misc registrations live, relative to the host root.
const BinfmtDir = "proc/sys/fs/binfmt_misc"

// binfmtBaselines maps a QEMU user-mode binfmt_misc entry to the ISA
// isamatch credits it with. They are deliberately conservative: which
// extensions QEMU emulates depends on its version and on the -cpu it
// defaults to, and binfmt_misc does not say either. A node is credited only
// with what every QEMU release of the last years runs:
//
//   - qemu-riscv64 -> rv64gc, qemu-riscv32 -> rv32gc: the RISC-V baseline
//     every distribution targets. Newer QEMU default CPUs add V and many Z*
//     extensions, but older ones (still in Debian stable) do not.
//   - qemu-aarch64 -> arm64 (Armv8.0 fp+asimd): QEMU's default "max" CPU has
//     had far more for years, but the base is what arm64 images assume.
//   - qemu-x86_64 -> x86-64-v2: TCG has run SSE4.2/POPCNT for a long time;
//     AVX2 (v3) only arrived in QEMU 7.2.
var binfmtBaselines = map[string]string{
	"qemu-riscv64": "rv64gc",
	"qemu-riscv32": "rv32gc",
	"qemu-aarch64": "arm64",
	"qemu-x86_64":  "x86-64-v2",
}

// BinfmtISA returns the ISA isamatch credits a binfmt_misc entry name
// ("qemu-riscv64") with; ok is false for entries isamatch has no
// architecture for (qemu-arm, qemu-s390x, ...).
func BinfmtISA(entry string) (i isa.ISA, ok bool, err error) {
	spec, ok := binfmtBaselines[entry]
	if !ok {
		return isa.ISA{}, false, nil
	}
	if strings.HasPrefix(spec, "rv") {
		i, err = isa.ParseRISCV(spec)
	} else {
		i, err = isa.Parse(spec)
	}
	if err != nil {
		return isa.ISA{}, false, fmt.Errorf("baseline %s of %s: %w", spec, entry, err)
	}
	return i, true, nil
}

// binfmtEntry is one qemu-* registration.
type binfmtEntry struct {
	name    string
	enabled bool
}

// readBinfmt lists the qemu-* entries of binfmt_misc and whether each is
// enabled (its first line is "enabled", and the global "status" is not
// "disabled"). A missing directory means no entries.
func readBinfmt(fsys fs.FS) ([]binfmtEntry, error) {
	entries, err := fs.ReadDir(fsys, BinfmtDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", BinfmtDir, err)
	}
	globalOn := true
	if first, err := firstLine(fsys, path.Join(BinfmtDir, "status")); err == nil && first == "disabled" {
		globalOn = false
	}
	var out []binfmtEntry
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "qemu-") || e.IsDir() {
			continue
		}
		first, err := firstLine(fsys, path.Join(BinfmtDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read binfmt_misc entry %s: %w", e.Name(), err)
		}
		out = append(out, binfmtEntry{name: e.Name(), enabled: globalOn && first == "enabled"})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out, nil
}

func firstLine(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		return strings.TrimSpace(sc.Text()), nil
	}
	return "", sc.Err()
}
