//go:build !linux

package probe

import (
	"errors"
	"os/exec"
)

func chrootInto(*exec.Cmd, string) error {
	return errors.New("chroot into the host root is only supported on Linux")
}
