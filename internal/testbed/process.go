package testbed

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a binary the harness runs for a suite (kube-scheduler,
// docker-registry, the labeler, the webhook). Its stdout and stderr go to a
// log file whose tail is shown when something fails.
type Process struct {
	// Name is used in messages.
	Name string
	// LogPath is the file its output is written to.
	LogPath string

	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}

	mu      sync.Mutex
	waitErr error
	stopped bool
}

// StartProcess runs path with args, its output appended to logPath. The
// process outlives any context: stop it with Stop. env, when non-nil, is
// added to the current environment.
func StartProcess(name, path string, args []string, env []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, path, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM, waits up to timeout, then kills the process. It
// returns an error only if the process had died on its own before Stop.
func (p *Process) Stop(timeout time.Duration) error {
	p.mu.Lock()
	already := p.stopped
	p.stopped = true
	p.mu.Unlock()
	if exited, err := p.Exited(); exited {
		if already || err == nil {
			return nil
		}
		return fmt.Errorf("%s had exited before Stop: %w\n%s", p.Name, err, p.LogTail(20))
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// LogTail returns the last n lines of the process log, each indented, under
// a header naming the file.
func (p *Process) LogTail(n int) string {
	return fmt.Sprintf("--- last %d lines of %s (%s) ---\n%s", n, p.Name, p.LogPath, tail(p.LogPath, n))
}

// tail returns the last n lines of a file (or the read error as text).
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("    (cannot read: %v)\n", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// WaitHTTP polls url until check accepts the response status, the process
// exits, or timeout passes. A nil tlsConfig skips certificate verification
// (for self-signed health endpoints).
func (p *Process) WaitHTTP(ctx context.Context, url string, tlsConfig *tls.Config, timeout time.Duration, check func(status int) bool) error {
	if tlsConfig == nil {
		tlsConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback health check of a self-signed test server
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited while starting (%v)\n%s", p.Name, err, p.LogTail(30)) //nolint:errorlint // err is nil after a clean exit
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("build request for %s: %w", url, err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if check(resp.StatusCode) {
				return nil
			}
			lastErr = fmt.Errorf("status %d", resp.StatusCode)
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s after %s (last: %w)\n%s", p.Name, url, timeout, lastErr, p.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
