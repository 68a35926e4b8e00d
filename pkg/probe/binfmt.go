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

// binfmtArch maps a QEMU user-mode binfmt_misc entry to the architecture it
// emulates. What it runs of that architecture is found by running probe
// programs through it ([Emulator]), never assumed.
var binfmtArch = map[string]isa.Arch{
	"qemu-riscv64": isa.RISCV64,
	"qemu-riscv32": isa.RISCV32,
	"qemu-aarch64": isa.ARM64,
	"qemu-x86_64":  isa.AMD64,
}

// BinfmtArch returns the architecture a binfmt_misc entry name
// ("qemu-riscv64") emulates; ok is false for entries isamatch has no
// architecture for (qemu-arm, qemu-s390x, ...).
func BinfmtArch(entry string) (a isa.Arch, ok bool) {
	a, ok = binfmtArch[entry]
	return a, ok
}

// binfmtEntry is one qemu-* registration.
type binfmtEntry struct {
	name    string
	enabled bool
	// interpreter is the path the kernel runs the program with, as the
	// registering process saw it (the host's).
	interpreter string
	// flags are the registration's flags ("OCF", "POCF"); F means the
	// kernel opened the interpreter at registration, so it runs in every
	// mount namespace, containers included.
	flags string
}

// fixBinary reports whether the entry has the F (fix binary) flag.
func (e binfmtEntry) fixBinary() bool { return strings.Contains(e.flags, "F") }

// binfmtState is what binfmt_misc says.
type binfmtState struct {
	// mounted is false when the host has no binfmt_misc mounted (no
	// "status" file): no handler can run anything.
	mounted bool
	// globalOff is true when binfmt_misc is mounted but globally disabled.
	globalOff bool
	entries   []binfmtEntry
}

// readBinfmt lists the qemu-* entries of binfmt_misc: whether each is
// enabled (its first line is "enabled", and the global "status" is not
// "disabled"), its interpreter and flags. A missing or unmounted directory
// means no entries.
func readBinfmt(fsys fs.FS) (binfmtState, error) {
	var st binfmtState
	fi, err := fs.Stat(fsys, BinfmtDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("read %s: %w", BinfmtDir, err)
	case !fi.IsDir():
		return st, fmt.Errorf("read %s: not a directory", BinfmtDir)
	}
	status, err := firstLine(fsys, path.Join(BinfmtDir, "status"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("read %s/status: %w", BinfmtDir, err)
	}
	st.mounted = true
	st.globalOff = status == "disabled"
	entries, err := fs.ReadDir(fsys, BinfmtDir)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", BinfmtDir, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "qemu-") || e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(BinfmtDir, e.Name()))
		if err != nil {
			return st, fmt.Errorf("read binfmt_misc entry %s: %w", e.Name(), err)
		}
		st.entries = append(st.entries, parseBinfmtEntry(e.Name(), string(data), !st.globalOff))
	}
	sort.Slice(st.entries, func(a, b int) bool { return st.entries[a].name < st.entries[b].name })
	return st, nil
}

// parseBinfmtEntry reads an entry in the kernel's format: "enabled" or
// "disabled", then "interpreter <path>", "flags: <letters>", "offset",
// "magic", "mask" lines.
func parseBinfmtEntry(name, text string, globalOn bool) binfmtEntry {
	e := binfmtEntry{name: name}
	for k, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if k == 0 {
			e.enabled = globalOn && line == "enabled"
			continue
		}
		if v, ok := strings.CutPrefix(line, "interpreter "); ok {
			e.interpreter = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "flags:"); ok {
			e.flags = strings.TrimSpace(v)
		}
	}
	return e
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
