package probe

import (
	"os/exec"
	"syscall"
)

// chrootInto makes cmd chroot into root (and chdir to its "/") before exec.
func chrootInto(cmd *exec.Cmd, root string) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	return nil
}
