package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// DefaultProgramsDir is where the labeler image holds the probe programs:
// <dir>/<arch>/<name>, static programs for <arch> that execute what <name>
// stands for, check the result and exit 0 (hack/probes builds them from
// source).
const DefaultProgramsDir = "/probes"

// BaseProgram is the probe program of an architecture's baseline; a handler
// that does not run it is not used at all.
const BaseProgram = "base"

// ProgramISA is the ISA a probe program proves when it exits 0, by the
// naming rule the programs are built with:
//
//	riscv64/base -> rv64gc        riscv64/<ext> -> rv64gc_<ext>
//	amd64/base   -> x86-64        amd64/x86-64-vN -> x86-64-vN   amd64/<f> -> x86-64+<f>
//	arm64/base   -> arm64         arm64/<f> -> arm64+<f>
//
// An error names a program no rule covers.
func ProgramISA(arch isa.Arch, name string) (isa.ISA, error) {
	var spec string
	switch arch {
	case isa.RISCV64:
		spec = "rv64gc"
	case isa.AMD64:
		spec = "x86-64"
	case isa.ARM64:
		spec = "arm64"
	default:
		return isa.ISA{}, fmt.Errorf("probe program %s/%s: no probe programs for %s", arch, name, arch)
	}
	switch {
	case name == BaseProgram:
	case arch == isa.RISCV64:
		spec += "_" + name
	case arch == isa.AMD64 && strings.HasPrefix(name, "x86-64-"):
		spec = name
	default:
		spec += "+" + name
	}
	i, err := isa.Parse(spec)
	if err != nil {
		return isa.ISA{}, fmt.Errorf("probe program %s/%s: %w", arch, name, err)
	}
	return i, nil
}

// maxPrograms bounds the probe programs of one architecture.
const maxPrograms = 64

// listPrograms returns the probe programs of arch in fsys (rooted at the
// programs directory), BaseProgram first, then by name; none when the
// directory does not exist.
func listPrograms(fsys fs.FS, arch isa.Arch) ([]string, error) {
	entries, err := fs.ReadDir(fsys, string(arch))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list probe programs of %s: %w", arch, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	if len(names) > maxPrograms {
		return nil, fmt.Errorf("list probe programs of %s: %d programs; the limit is %d", arch, len(names), maxPrograms)
	}
	if !slices.Contains(names, BaseProgram) {
		return nil, nil
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == BaseProgram:
			return -1
		case b == BaseProgram:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, nil
}

// ranISA is the union of what the programs in ran prove; ran holds
// BaseProgram.
func ranISA(arch isa.Arch, ran []string) (isa.ISA, error) {
	out, err := ProgramISA(arch, BaseProgram)
	if err != nil {
		return isa.ISA{}, err
	}
	for _, name := range ran {
		i, err := ProgramISA(arch, name)
		if err != nil {
			return isa.ISA{}, err
		}
		if out, err = isa.Union(out, i); err != nil {
			return isa.ISA{}, fmt.Errorf("probe program %s/%s: %w", arch, name, err)
		}
	}
	return out, nil
}
