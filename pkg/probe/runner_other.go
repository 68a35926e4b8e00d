//go:build !linux

package probe

import (
	"errors"
	"os"
	"os/exec"
)

// isolate supports neither chroot nor a credential change outside Linux;
// without them the command runs as the labeler's own user, and a timeout
// kills the command's process only.
func isolate(_ *exec.Cmd, root string, cred *Credential) error {
	if root != "" {
		return errors.New("chroot into the host root is only supported on Linux")
	}
	if cred != nil {
		return errors.New("running host commands as another user is only supported on Linux")
	}
	return nil
}

// killGroup kills the command's process only.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func cleanupGroup(int) error { return nil }
