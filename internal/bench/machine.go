package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes the host a run is measured on.
type Machine struct {
	CPUs     int
	CPUModel string
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start.
	LoadAvg string
	Kernel  string
	Go      string
}

// ReadMachine reads the CPU count, model and load average (Linux /proc; on
// other systems the model and load read "unknown").
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), CPUModel: "unknown", LoadAvg: "unknown", Kernel: "unknown", Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// String is one line for the table header.
func (m Machine) String() string {
	return fmt.Sprintf("machine: %d CPUs (nproc), %s; load average at start %s; linux %s; %s",
		m.CPUs, m.CPUModel, m.LoadAvg, m.Kernel, m.Go)
}
