package testbed

import "syscall"

// sysProcAttr makes a child process die with the test binary, so a crashed
// suite leaves no kube-scheduler or registry behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
