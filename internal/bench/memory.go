package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MemStatus is a process's resident memory from /proc/<pid>/status, in KiB;
// VmHWM is its peak.
type MemStatus struct {
	VmRSS, RssAnon, RssFile, VmHWM int64
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
	m, err := parseMemStatus(f)
	if err != nil {
		return m, fmt.Errorf("pid %d: %w", pid, err)
	}
	return m, nil
}

// parseMemStatus reads VmRSS, RssAnon and RssFile from the text of a
// /proc/<pid>/status file.
func parseMemStatus(r io.Reader) (MemStatus, error) {
	var m MemStatus
	sc := bufio.NewScanner(r)
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
		case "VmHWM":
			m.VmHWM = n
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("read status: %w", err)
	}
	if m.VmRSS == 0 {
		return m, errors.New("no VmRSS in the status")
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

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// CPUTime is the user + system CPU time pid has used.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	d, err := parseCPUTime(string(data))
	if err != nil {
		return 0, fmt.Errorf("stat of pid %d: %w", pid, err)
	}
	return d, nil
}

// parseCPUTime is the user + system CPU time in the text of a
// /proc/<pid>/stat file.
func parseCPUTime(s string) (time.Duration, error) {
	// The command name may hold spaces and parentheses: fields start after
	// its last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("no ')' closing the command name")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the name, want >= 13", len(f))
	}
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q stime %q", f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
