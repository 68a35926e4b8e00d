//go:build unix

package registry

import (
	"os/exec"
	"syscall"
)

// killProcessGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group, so a plugin's children (a shell
// script's sleep, a cloud CLI) die with it.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
