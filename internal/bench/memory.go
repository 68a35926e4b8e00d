package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MemStatus is a process's resident memory from /proc/<pid>/status, in KiB.
type MemStatus struct {
	VmRSS, RssAnon, RssFile int64
}

// MiB formats KiB as MiB.
func MiB(kib int64) float64 { return float64(kib) / 1024 }

// ReadMemStatus reads VmRSS, RssAnon and RssFile of pid.
func ReadMemStatus(pid int) (MemStatus, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return MemStatus{}, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	defer f.Close()
	var m MemStatus
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.VmRSS = n
		case "RssAnon":
			m.RssAnon = n
		case "RssFile":
			m.RssFile = n
		}
	}
	if m.VmRSS == 0 {
		return m, fmt.Errorf("pid %d: no VmRSS in /proc/%d/status", pid, pid)
	}
	return m, nil
}

// PidOf returns the pid of the one running process whose executable is
// exe (an absolute path the benchmark built, so no other process has it).
func PidOf(exe string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("list /proc: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && target == exe {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		return 0, fmt.Errorf("%d processes run %s, want 1", len(pids), exe)
	}
	return pids[0], nil
}
