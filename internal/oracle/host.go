package oracle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Host is what a host root can run, read from its own files: never from
// node labels or from the webhook's affinity.
type Host struct {
	Native ISA
	// Emulated are the ISAs a cross toolchain on the host targets (the
	// paper's QEMU column).
	Emulated []ISA
}

// CrossGCC is where the paper's label automaton finds the cross toolchain.
const CrossGCC = "opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc"

var withArchRE = regexp.MustCompile(`--with-arch=(\S+)`)

// ReadHost reads dir's proc/cpuinfo (first processor block: the machines
// the suites build are homogeneous) and the cross compiler's --with-arch.
func ReadHost(dir string) (Host, error) {
	data, err := os.ReadFile(filepath.Join(dir, "proc", "cpuinfo"))
	if err != nil {
		return Host{}, fmt.Errorf("read host root: %w", err)
	}
	block := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			if len(block) > 0 {
				break
			}
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			block[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	var h Host
	switch {
	case block["isa"] != "":
		h.Native, err = riscvHost(block["isa"], block)
		if err != nil {
			return Host{}, fmt.Errorf("isa line of %s: %w", dir, err)
		}
	case block["flags"] != "":
		h.Native = newISA(AMD64, strings.Fields(block["flags"])...)
	case block["Features"] != "":
		h.Native = newISA(ARM64, strings.Fields(block["Features"])...)
	default:
		return Host{}, errors.New("no isa, flags or Features line in " + dir + "/proc/cpuinfo")
	}
	if script, err := os.ReadFile(filepath.Join(dir, CrossGCC)); err == nil {
		m := withArchRE.FindSubmatch(script)
		if m == nil {
			return Host{}, fmt.Errorf("no --with-arch in %s/%s", dir, CrossGCC)
		}
		e, err := parseRISCV(strings.ToLower(string(m[1])))
		if err != nil {
			return Host{}, fmt.Errorf("--with-arch of %s: %w", dir, err)
		}
		h.Emulated = append(h.Emulated, e)
	}
	return h, nil
}
