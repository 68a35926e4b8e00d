package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"time"
)

// ErrNotFound is returned by a [Runner] when the binary does not exist in
// the host root. The probe treats it as "source absent", not as a failure.
var ErrNotFound = errors.New("binary not found in host root")

// Defaults of [ExecRunner].
const (
	DefaultCommandTimeout = 10 * time.Second
	// DefaultMaxOutput bounds what one command may print (stdout and stderr
	// together); gcc -v and -Q --help=target print a few KiB.
	DefaultMaxOutput = 1 << 20
	// NobodyID is the UID and GID host commands run as by default.
	NobodyID = 65534
)

// Runner runs a host binary. file is an absolute path inside the host root
// ("/usr/bin/gcc"). It returns the combined stdout and stderr (gcc -v prints
// to stderr).
type Runner interface {
	Run(ctx context.Context, file string, args ...string) ([]byte, error)
}

// Credential is the user and group a host command runs as.
type Credential struct {
	UID, GID uint32
}

// ExecRunner runs host binaries with os/exec.
//
// Before running file it resolves it inside Root (symbolic links are
// followed as the chroot would) and refuses it unless the binary and every
// directory on the way, Root included, are owned by root (or by the user
// running the labeler) and are neither group- nor world-writable: whoever
// can replace a compiler must already be root.
//
// With Chroot set the child process chroots into Root before exec'ing file
// (no chroot binary needed in the image), so the binary finds its own
// libraries, specs and assembler inside the host root; this needs
// CAP_SYS_CHROOT. Without Chroot it executes <Root>/<file> directly,
// which is what tests use (fixture gcc files are small #!/bin/sh scripts) and
// what a labeler whose host root is "/" uses.
//
// With Credential set the child drops to that user and group (no
// supplementary groups) after the chroot and before exec: it needs
// CAP_SETUID and CAP_SETGID, and CAP_KILL to kill the command's processes
// on timeout.
//
// Every command runs in its own process group. When it exits, times out or
// prints more than MaxOutput bytes, the whole group is killed, and those of
// its processes that became this process's children (when the labeler is
// PID 1 of its container) are reaped.
type ExecRunner struct {
	Root   string
	Chroot bool
	// Credential, when set, is the user commands run as.
	Credential *Credential
	// Timeout bounds every command; zero means DefaultCommandTimeout.
	Timeout time.Duration
	// MaxOutput bounds each command's output; zero means DefaultMaxOutput.
	MaxOutput int
	// Reaper, when set, is the PID 1 zombie reaper: Run keeps it from
	// reaping while a command runs, so the command's own exit status is
	// never stolen.
	Reaper *Reaper
	// ChrootPath, when set, is an external chroot program run as
	// "ChrootPath <Root> <file> args..." instead of the in-process chroot.
	ChrootPath string
}

var _ Runner = (*ExecRunner)(nil)

// NewRunner returns the runner the labeler uses for a host root: chroot into
// it unless it is "/", and run commands as nobody (65534) when the labeler
// runs as root.
func NewRunner(hostRoot string, timeout time.Duration) *ExecRunner {
	clean := filepath.Clean(hostRoot)
	r := &ExecRunner{Root: clean, Chroot: clean != "/", Timeout: timeout}
	if os.Geteuid() == 0 {
		r.Credential = &Credential{UID: NobodyID, GID: NobodyID}
	}
	return r
}

// Run implements [Runner]. The command's environment is LC_ALL=C (gcc's
// messages are parsed), PATH and TMPDIR.
func (r *ExecRunner) Run(ctx context.Context, file string, args ...string) ([]byte, error) {
	return r.RunEnv(ctx, nil, file, args...)
}

// RunEnv is Run with env as the command's whole environment; nil means
// Run's.
func (r *ExecRunner) RunEnv(ctx context.Context, env []string, file string, args ...string) ([]byte, error) {
	if !path.IsAbs(file) {
		return nil, fmt.Errorf("run %s: path must be absolute inside the host root", file)
	}
	resolved, err := resolveTrusted(r.Root, file)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", file, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	maxOut := r.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var cmd *exec.Cmd
	switch {
	case r.Chroot && r.ChrootPath != "":
		cmd = exec.CommandContext(ctx, r.ChrootPath, append([]string{r.Root, file}, args...)...)
	case r.Chroot:
		// Exec the resolved path (checked above) under the name asked for:
		// gcc finds its own directories from argv[0].
		cmd = exec.CommandContext(ctx, resolved, args...)
		cmd.Args[0] = file
		cmd.Dir = "/"
	default:
		cmd = exec.CommandContext(ctx, filepath.Join(r.Root, filepath.FromSlash(resolved)), args...)
		cmd.Args[0] = filepath.Join(r.Root, filepath.FromSlash(file))
	}
	chroot := ""
	if r.Chroot && r.ChrootPath == "" {
		chroot = r.Root
	}
	if err := isolate(cmd, chroot, r.Credential); err != nil {
		return nil, fmt.Errorf("run %s: %w", file, err)
	}
	cmd.Env = env
	if env == nil {
		// gcc's messages must not be translated: we parse them.
		cmd.Env = []string{"LC_ALL=C", "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=/tmp"}
	}
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{limit: maxOut}
	cmd.Stdout = out
	cmd.Stderr = out

	if r.Reaper != nil {
		r.Reaper.mu.RLock()
		defer r.Reaper.mu.RUnlock()
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", file, err)
	}
	out.setOnFull(func() { _ = killGroup(cmd.Process.Pid) })
	runErr := cmd.Wait()
	// Whatever the command left behind in its group (a daemonised child, a
	// child still printing) goes with it.
	cleanupErr := cleanupGroup(cmd.Process.Pid)
	switch {
	case out.full():
		return out.Bytes(), fmt.Errorf("run %s: output exceeds %d bytes: killed", file, maxOut)
	case runErr != nil && ctx.Err() != nil:
		return out.Bytes(), fmt.Errorf("run %s: timed out after %s: %w", file, timeout, ctx.Err())
	case runErr != nil:
		return out.Bytes(), fmt.Errorf("run %s: %w", file, runErr)
	case cleanupErr != nil:
		return out.Bytes(), fmt.Errorf("run %s: %w", file, cleanupErr)
	}
	return out.Bytes(), nil
}

// cappedBuffer keeps the first limit bytes written to it; a write past the
// limit calls onFull once (which kills the command) and is discarded, so the
// command's pipes are drained until it dies.
type cappedBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	exceeded bool
	onFull   func()
	called   bool
}

func (b *cappedBuffer) setOnFull(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onFull = f
	if b.exceeded && !b.called {
		b.called = true
		go f()
	}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.limit - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		b.exceeded = true
		if b.onFull != nil && !b.called {
			b.called = true
			b.onFull()
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exceeded
}

func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
