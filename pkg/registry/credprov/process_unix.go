//go:build unix

package credprov

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

// killGroupAfterExit kills what is left of the process group of cmd, which
// has exited and been waited for: children a plugin left behind (a
// credential helper, a background refresher). The group keeps the
// plugin's pid as its id while any member lives, so the id names no other
// process; an empty group is already gone (ESRCH, ignored).
func killGroupAfterExit(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
