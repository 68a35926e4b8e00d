package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// subreaper makes the test process the reaper of its orphaned descendants,
// as the labeler is when it is PID 1 of its container.
func subreaper(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// readPID reads a PID a script wrote to p.
func readPID(t *testing.T, p string) int {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("the command wrote no PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether no process (zombies included) has PID pid, or, for a
// negative pid, whether the process group -pid is empty.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestExecRunnerKillsTheProcessGroup: a command that leaves a sleeping
// grandchild behind, whether it times out, floods its output or exits,
// leaves no process of its group and no zombie.
func TestExecRunnerKillsTheProcessGroup(t *testing.T) {
	subreaper(t)
	tests := []struct {
		name    string
		body    string // after the grandchild is started
		runner  ExecRunner
		wantErr string
		wantLen int
	}{
		{name: "timeout", body: "exec sleep 60\n", runner: ExecRunner{Timeout: 300 * time.Millisecond}, wantErr: "timed out after 300ms"},
		{name: "output over the cap", body: "while :; do echo 0123456789abcdef; done\n", runner: ExecRunner{MaxOutput: 4096},
			wantErr: "output exceeds 4096 bytes: killed", wantLen: 4096},
		{name: "exits, grandchild still running", body: "exit 0\n", runner: ExecRunner{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			state := t.TempDir()
			// The grandchild closes the output pipe so that only the group
			// kill, not os/exec's WaitDelay, can end it.
			writeFile(t, root, "usr/bin/gcc", fmt.Sprintf("#!/bin/sh\necho $$ > %[1]s/pid\nsleep 60 >/dev/null 2>&1 &\necho $! > %[1]s/grandchild\n%s", state, tc.body), 0o755)
			r := tc.runner
			r.Root = root
			start := time.Now()
			out, err := r.Run(t.Context(), "/usr/bin/gcc")
			elapsed := time.Since(start)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Run(): %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Run() error = %v, want %q", err, tc.wantErr)
			}
			if tc.wantLen != 0 && len(out) != tc.wantLen {
				t.Errorf("output is %d bytes, want %d", len(out), tc.wantLen)
			}
			pgid := readPID(t, filepath.Join(state, "pid"))
			grandchild := readPID(t, filepath.Join(state, "grandchild"))
			if !gone(-pgid) {
				t.Errorf("process group %d still exists after Run returned", pgid)
			}
			if !gone(grandchild) {
				t.Errorf("grandchild %d still exists (running or a zombie) after Run returned", grandchild)
			}
			if elapsed > 30*time.Second {
				t.Errorf("Run took %s: the grandchild's sleep was waited for", elapsed)
			}
		})
	}
}

// TestExecRunnerChrootDropsPrivileges runs the test binary, as a host
// binary of a fake host root, through the labeler's own runner: chrooted,
// as nobody, without the labeler's supplementary groups.
func TestExecRunnerChrootDropsPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot and setuid need root")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	chmod(t, root, 0o755)
	writeFile(t, root, "usr/bin/print-ids", string(data), 0o755)
	r := NewRunner(root, 0)
	if diff := cmp.Diff(&Credential{UID: NobodyID, GID: NobodyID}, r.Credential); diff != "" {
		t.Errorf("NewRunner as root: credential (-want +got):\n%s", diff)
	}
	out, err := r.Run(t.Context(), "/usr/bin/print-ids")
	if err != nil {
		t.Fatalf("Run(): %v\n%s", err, out)
	}
	if diff := cmp.Diff("uid=65534 euid=65534 gid=65534 egid=65534 groups=[]\n", string(out)); diff != "" {
		t.Errorf("ids of the host command (-want +got):\n%s", diff)
	}
	r.Credential = &Credential{UID: 4321, GID: 8765}
	out, err = r.Run(t.Context(), "/usr/bin/print-ids")
	if err != nil {
		t.Fatalf("Run(): %v\n%s", err, out)
	}
	if diff := cmp.Diff("uid=4321 euid=4321 gid=8765 egid=8765 groups=[]\n", string(out)); diff != "" {
		t.Errorf("ids of the host command (-want +got):\n%s", diff)
	}
}

// TestExecRunnerRealGCC runs this machine's gcc the way the DaemonSet does:
// chrooted, as nobody, into an emptyDir-like root where only the host's
// /usr is mounted read-only. It proves /usr, the merged-/usr links and a
// writable /tmp are all gcc needs.
func TestExecRunnerRealGCC(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot, setuid and mount need root")
	}
	if _, err := os.Stat("/usr/bin/gcc"); err != nil {
		t.Skip("no /usr/bin/gcc on this machine")
	}
	root := t.TempDir()
	chmod(t, root, 0o777)
	usr := filepath.Join(root, "usr")
	if err := os.Mkdir(usr, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("/usr", usr, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Skipf("bind mount /usr: %v (no CAP_SYS_ADMIN here)", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(usr, unix.MNT_DETACH) })
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, usr, unix.AT_RECURSIVE, attr); err != nil {
		t.Fatalf("make %s recursively read-only: %v", usr, err)
	}
	if err := PrepareHostRoot(root); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(root, 0)
	out, err := r.Run(t.Context(), "/usr/bin/gcc", helpTargetArgs...)
	if err != nil {
		t.Fatalf("Run(gcc -Q --help=target): %v\n%s", err, out)
	}
	if marchFromHelpTarget(out) == "" {
		t.Errorf("gcc printed no -march= line:\n%s", out)
	}
	if out, err = r.Run(t.Context(), "/usr/bin/gcc", "-v"); err != nil || !strings.Contains(string(out), "Configured with:") {
		t.Errorf("Run(gcc -v) = %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "tmp")); len(entries) != 0 {
		t.Errorf("gcc left temporary files: %v", entries)
	}
}

// TestReaperReapsOrphans: an exited child nobody waits for is a zombie
// until the reaper runs.
func TestReaperReapsOrphans(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exit 3"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(stat)
		if err != nil {
			t.Fatalf("child %d: %v", pid, err)
		}
		if strings.Contains(string(data), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never exited: %s", pid, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := NewReaper().reap(); n < 1 {
		t.Errorf("reap() = %d, want at least the zombie %d", n, pid)
	}
	if !gone(pid) {
		t.Errorf("zombie %d still exists after reap()", pid)
	}
}
