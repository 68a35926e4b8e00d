package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// BinfmtDir is where the kernel's binfmt_misc is mounted.
const BinfmtDir = "/proc/sys/fs/binfmt_misc"

// BinfmtConfDir holds the registrations Debian's qemu-user-static ships
// (systemd-binfmt's format: one ":name:type:offset:magic:mask:interpreter:flags"
// line each).
const BinfmtConfDir = "/usr/lib/binfmt.d"

// Binfmt is a binfmt_misc handler the suite registered, and what it
// replaced; Restore puts the host's state back.
type Binfmt struct {
	name    string
	mounted bool   // binfmt_misc was mounted for it
	enabled bool   // binfmt_misc was globally enabled for it
	saved   string // the registration line of the host's own entry of that name, "" for none
	savedOn bool   // that entry was enabled
}

// RegisterBinfmt registers the handler name ("qemu-riscv64") from
// Debian's binfmt.d file (qemu-user-static: flags OPF, so the kernel opens
// the interpreter once and containers need none), mounting binfmt_misc
// first when the host has it unmounted and enabling it when it is
// globally disabled. A host entry of the same name is saved and removed;
// Restore registers it again.
func RegisterBinfmt(name string) (b *Binfmt, err error) {
	line, err := os.ReadFile(filepath.Join(BinfmtConfDir, name+".conf"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Missing{What: "no " + filepath.Join(BinfmtConfDir, name+".conf"), Fix: "hack/deps.sh node (apt-get install qemu-user-static)"}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s registration: %w", name, err)
	}
	b = &Binfmt{name: name}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Restore())
			b = nil
		}
	}()
	if _, err := os.Stat(filepath.Join(BinfmtDir, "status")); errors.Is(err, fs.ErrNotExist) {
		if err := unix.Mount("binfmt_misc", BinfmtDir, "binfmt_misc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return b, &Unsupported{What: "cannot mount binfmt_misc at " + BinfmtDir + ": " + err.Error()}
		}
		b.mounted = true
	}
	status, err := os.ReadFile(filepath.Join(BinfmtDir, "status"))
	if err != nil {
		return b, fmt.Errorf("read binfmt_misc status: %w", err)
	}
	if strings.TrimSpace(string(status)) == "disabled" {
		if err := os.WriteFile(filepath.Join(BinfmtDir, "status"), []byte("1"), 0); err != nil {
			return b, fmt.Errorf("enable binfmt_misc: %w", err)
		}
		b.enabled = true
	}
	entry := filepath.Join(BinfmtDir, name)
	if text, err := os.ReadFile(entry); err == nil {
		b.saved, b.savedOn = registrationOf(name, string(text))
		if err := os.WriteFile(entry, []byte("-1"), 0); err != nil {
			return b, fmt.Errorf("remove the host's %s to register the suite's: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(BinfmtDir, "register"), []byte(strings.TrimSpace(string(line))), 0); err != nil {
		return b, fmt.Errorf("register %s: %w", name, err)
	}
	return b, nil
}

// Restore removes the suite's handler and puts back what RegisterBinfmt
// changed: the host's own entry of that name, the global status, the
// mount.
func (b *Binfmt) Restore() error {
	var errs []error
	entry := filepath.Join(BinfmtDir, b.name)
	if _, err := os.Stat(entry); err == nil {
		if err := os.WriteFile(entry, []byte("-1"), 0); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", b.name, err))
		}
	}
	if b.saved != "" {
		if err := os.WriteFile(filepath.Join(BinfmtDir, "register"), []byte(b.saved), 0); err != nil {
			errs = append(errs, fmt.Errorf("register the host's %s again: %w", b.name, err))
		} else if !b.savedOn {
			if err := os.WriteFile(entry, []byte("0"), 0); err != nil {
				errs = append(errs, fmt.Errorf("disable the host's %s again: %w", b.name, err))
			}
		}
	}
	if b.enabled {
		if err := os.WriteFile(filepath.Join(BinfmtDir, "status"), []byte("0"), 0); err != nil {
			errs = append(errs, fmt.Errorf("disable binfmt_misc again: %w", err))
		}
	}
	if b.mounted {
		if err := unix.Unmount(BinfmtDir, 0); err != nil {
			errs = append(errs, fmt.Errorf("unmount binfmt_misc: %w", err))
		}
	}
	return errors.Join(errs...)
}

// registrationOf turns an entry as the kernel prints it ("enabled",
// "interpreter /x", "flags: OCF", "offset 0", "magic 7f45...", "mask
// ff...") back into the line that registers it, and whether it is enabled.
func registrationOf(name, text string) (line string, enabled bool) {
	var interp, flags, offset, magic, mask string
	kind := "M"
	for k, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case k == 0:
			enabled = l == "enabled"
		case strings.HasPrefix(l, "interpreter "):
			interp = strings.TrimPrefix(l, "interpreter ")
		case strings.HasPrefix(l, "flags:"):
			flags = strings.TrimSpace(strings.TrimPrefix(l, "flags:"))
		case strings.HasPrefix(l, "offset "):
			offset = strings.TrimPrefix(l, "offset ")
		case strings.HasPrefix(l, "magic "):
			magic = escapeHex(strings.TrimPrefix(l, "magic "))
		case strings.HasPrefix(l, "mask "):
			mask = escapeHex(strings.TrimPrefix(l, "mask "))
		case strings.HasPrefix(l, "extension "):
			kind, magic = "E", strings.TrimPrefix(strings.TrimPrefix(l, "extension "), ".")
		}
	}
	return fmt.Sprintf(":%s:%s:%s:%s:%s:%s:%s", name, kind, offset, magic, mask, interp, flags), enabled
}

// escapeHex writes hex digits as the \xHH escapes the register file reads.
func escapeHex(h string) string {
	var b strings.Builder
	for i := 0; i+1 < len(h); i += 2 {
		b.WriteString(`\x` + h[i:i+2])
	}
	return b.String()
}
