package probe

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// groupGoneWithin bounds how long Run waits for a killed process group to
// disappear.
const groupGoneWithin = 2 * time.Second

// isolate makes cmd run in its own process group, chrooted into root (when
// not "") and as cred (when set), and makes a cancelled context kill the
// whole group.
func isolate(cmd *exec.Cmd, root string, cred *Credential) error {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if root != "" {
		attr.Chroot = root
	}
	if cred != nil {
		// Groups is empty and NoSetGroups false: setgroups(0) drops every
		// supplementary group of the labeler.
		attr.Credential = &syscall.Credential{Uid: cred.UID, Gid: cred.GID}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	return nil
}

// killGroup sends SIGKILL to every process of the group pgid.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	return nil
}

// cleanupGroup kills what is left of the group pgid and waits until no
// process of it exists. Members that were reparented to this process (it
// is PID 1 of the labeler's container, or a subreaper) are reaped here by
// process group, so a reaper of all children never races os/exec; others
// are reaped by their own init.
func cleanupGroup(pgid int) error {
	deadline := time.Now().Add(groupGoneWithin)
	for {
		err := syscall.Kill(-pgid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kill process group %d: %w", pgid, err)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process group %d still exists %s after SIGKILL", pgid, groupGoneWithin)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
