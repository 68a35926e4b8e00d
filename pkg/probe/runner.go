package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"time"
)

// ErrNotFound is returned by a [Runner] when the binary does not exist in
// the host root. The probe treats it as "source absent", not as a failure.
var ErrNotFound = errors.New("binary not found in host root")

// Runner runs a host binary. file is an absolute path inside the host root
// ("/usr/bin/gcc"). It returns the combined stdout and stderr (gcc -v prints
// to stderr).
type Runner interface {
	Run(ctx context.Context, file string, args ...string) ([]byte, error)
}

// ExecRunner runs host binaries with os/exec.
//
// With Chroot set the child process chroots into Root before exec'ing file
// (no chroot binary needed in the image), so the binary finds its own
// libraries, specs and assembler inside the host root; this needs
// CAP_SYS_CHROOT. Without Chroot it executes <Root>/<file> directly,
// which is what tests use (fixture gcc files are small #!/bin/sh scripts) and
// what a labeler whose host root is "/" uses.
type ExecRunner struct {
	Root   string
	Chroot bool
	// Timeout bounds every command; zero means 10 seconds.
	Timeout time.Duration
	// ChrootPath, when set, is an external chroot program run as
	// "ChrootPath <Root> <file> args..." instead of the in-process chroot.
	ChrootPath string
}

var _ Runner = (*ExecRunner)(nil)

// NewRunner returns the runner the labeler uses for a host root: chroot into
// it unless it is "/".
func NewRunner(hostRoot string, timeout time.Duration) *ExecRunner {
	clean := filepath.Clean(hostRoot)
	return &ExecRunner{Root: clean, Chroot: clean != "/", Timeout: timeout}
}

// Run implements [Runner].
func (r *ExecRunner) Run(ctx context.Context, file string, args ...string) ([]byte, error) {
	if !path.IsAbs(file) {
		return nil, fmt.Errorf("run %s: path must be absolute inside the host root", file)
	}
	hostPath := filepath.Join(r.Root, filepath.FromSlash(file))
	if _, err := os.Lstat(hostPath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run %s: %w", file, ErrNotFound)
		}
		return nil, fmt.Errorf("run %s: %w", file, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var cmd *exec.Cmd
	switch {
	case r.Chroot && r.ChrootPath != "":
		cmd = exec.CommandContext(ctx, r.ChrootPath, append([]string{r.Root, file}, args...)...)
	case r.Chroot:
		cmd = exec.CommandContext(ctx, file, args...)
		if err := chrootInto(cmd, r.Root); err != nil {
			return nil, fmt.Errorf("run %s: %w", file, err)
		}
	default:
		cmd = exec.CommandContext(ctx, hostPath, args...)
	}
	// gcc's messages must not be translated: we parse them.
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return out.Bytes(), fmt.Errorf("run %s: timed out after %s: %w", file, timeout, ctx.Err())
		}
		return out.Bytes(), fmt.Errorf("run %s: %w", file, err)
	}
	return out.Bytes(), nil
}
