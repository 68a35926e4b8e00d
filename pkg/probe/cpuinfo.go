package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// cpuBlock is one processor paragraph of /proc/cpuinfo: key -> value, keys
// as printed ("hart isa", "Features", "flags").
type cpuBlock map[string]string

// parseCPUInfo splits /proc/cpuinfo into processor blocks. Keys and values
// are trimmed of spaces and tabs (kernels pad with tabs, pasted captures with
// spaces), CRLF is tolerated, and a new block starts at a blank line or at a
// second "processor" key. Lines without a colon are ignored.
func parseCPUInfo(data []byte) []cpuBlock {
	var blocks []cpuBlock
	cur := cpuBlock{}
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, cur)
		}
		cur = cpuBlock{}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if key == "processor" {
			if _, seen := cur["processor"]; seen {
				flush()
			}
		}
		cur[key] = val
	}
	flush()
	return blocks
}

// cpuinfoResult is what /proc/cpuinfo says about the native ISA.
type cpuinfoResult struct {
	found  bool
	native isa.ISA
	hints  isa.Hints
	// detail is a short human description: "hart isa of 4 harts".
	detail string
}

// fromCPUInfo derives the native ISA from cpuinfo blocks: RISC-V "hart isa"
// (or "isa") intersected over all harts, x86 "flags" or arm64 "Features"
// intersected over all processors. found is false when no block carries any
// of these.
func fromCPUInfo(blocks []cpuBlock) (cpuinfoResult, error) {
	var (
		res             cpuinfoResult
		count           int
		usedHartISA     bool
		kind            string
		first           = true
		hintsFromBlocks isa.Hints
	)
	add := func(i isa.ISA) error {
		if first {
			res.native = i
			first = false
			return nil
		}
		merged, err := isa.Intersect(res.native, i)
		if err != nil {
			return fmt.Errorf("intersect processor %d with the others: %w", count, err)
		}
		res.native = merged
		return nil
	}
	for _, b := range blocks {
		h := blockHints(b)
		if hintsFromBlocks == (isa.Hints{}) {
			hintsFromBlocks = h
		}
		switch {
		case riscvLine(b) != "":
			if kind != "" && kind != "riscv" {
				return res, fmt.Errorf("cpuinfo mixes %s and riscv processor blocks", kind)
			}
			kind = "riscv"
			line := riscvLine(b)
			if _, ok := b["hart isa"]; ok {
				usedHartISA = true
			}
			i, err := isa.ParseCPUInfoRISCV(line, h)
			if err != nil {
				return res, fmt.Errorf("parse riscv isa %q of processor %q: %w", line, b["processor"], err)
			}
			if err := add(i); err != nil {
				return res, err
			}
			count++
		case b["flags"] != "":
			if kind != "" && kind != "x86" {
				return res, fmt.Errorf("cpuinfo mixes %s and x86 processor blocks", kind)
			}
			kind = "x86"
			if err := add(isa.ParseX86Flags(strings.Fields(b["flags"]))); err != nil {
				return res, err
			}
			count++
		case b["Features"] != "":
			if kind != "" && kind != "arm64" {
				return res, fmt.Errorf("cpuinfo mixes %s and arm64 processor blocks", kind)
			}
			kind = "arm64"
			if err := add(isa.ParseARM64Features(strings.Fields(b["Features"]))); err != nil {
				return res, err
			}
			count++
		}
	}
	if count == 0 {
		return res, nil
	}
	res.found = true
	res.hints = hintsFromBlocks
	unit := "processors"
	field := map[string]string{"riscv": "isa", "x86": "flags", "arm64": "Features"}[kind]
	if kind == "riscv" {
		unit = "harts"
		if usedHartISA {
			field = "hart isa"
		}
	}
	if count == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	res.detail = fmt.Sprintf("%s of %d %s", field, count, unit)
	return res, nil
}

// riscvLine returns the RISC-V ISA string of a block, preferring the
// per-hart "hart isa" (Linux 6.7+) over "isa".
func riscvLine(b cpuBlock) string {
	for _, k := range []string{"hart isa", "isa"} {
		if v := b[k]; strings.HasPrefix(strings.ToLower(v), "rv") {
			return v
		}
	}
	return ""
}

func blockHints(b cpuBlock) isa.Hints {
	return isa.Hints{
		MVendorID:     b["mvendorid"],
		MArchID:       b["marchid"],
		UArch:         b["uarch"],
		VectorVersion: b["cpu-vector"],
	}
}
