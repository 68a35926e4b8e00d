package probes

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed amd64/*.s arm64/*.s riscv64/*.s
var sources embed.FS

// toolchain is how one architecture's programs are assembled and linked.
type toolchain struct {
	arch, triple, pkg string
	asFlags           []string
}

var toolchains = []toolchain{
	{arch: "amd64", triple: "x86_64-linux-gnu", pkg: "binutils-x86-64-linux-gnu"},
	{arch: "arm64", triple: "aarch64-linux-gnu", pkg: "binutils-aarch64-linux-gnu"},
	{arch: "riscv64", triple: "riscv64-linux-gnu", pkg: "binutils-riscv64-linux-gnu", asFlags: []string{"-march=rv64gc", "-mabi=lp64d"}},
}

// Program is one probe program.
type Program struct {
	// Arch is its architecture (GOARCH spelling) and Name its name: its
	// path under the programs directory is Arch/Name.
	Arch, Name string
}

// Programs lists the programs Build makes, by architecture and name.
func Programs() []Program {
	var out []Program
	for _, tc := range toolchains {
		entries, err := fs.ReadDir(sources, tc.arch)
		if err != nil {
			continue // cannot happen: the directories are embedded
		}
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), ".s"); ok {
				out = append(out, Program{Arch: tc.arch, Name: name})
			}
		}
	}
	return out
}

// Build assembles and links every program of archs (all when empty) into
// outDir/<arch>/<name>, mode 0755. A missing assembler or linker is an
// error naming the Debian package that has it.
func Build(ctx context.Context, outDir string, archs ...string) error {
	for _, tc := range toolchains {
		if len(archs) > 0 && !slices.Contains(archs, tc.arch) {
			continue
		}
		as, ld := tc.triple+"-as", tc.triple+"-ld"
		for _, tool := range []string{as, ld} {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Errorf("build probe programs for %s: %s not found: install %s (hack/deps.sh)", tc.arch, tool, tc.pkg)
			}
		}
		dir := filepath.Join(outDir, tc.arch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("build probe programs: %w", err)
		}
		for _, p := range Programs() {
			if p.Arch != tc.arch {
				continue
			}
			if err := build(ctx, tc, as, ld, p.Name, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// build makes one program: as, then a static, stripped ld without build
// id, so the same sources and binutils give the same bytes.
func build(ctx context.Context, tc toolchain, as, ld, name, dir string) error {
	src, err := sources.ReadFile(path.Join(tc.arch, name+".s"))
	if err != nil {
		return fmt.Errorf("probe program %s/%s: %w", tc.arch, name, err)
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return fmt.Errorf("probe program %s/%s: %w", tc.arch, name, err)
	}
	defer os.RemoveAll(tmp)
	s, o := filepath.Join(tmp, name+".s"), filepath.Join(tmp, name+".o")
	if err := os.WriteFile(s, src, 0o644); err != nil {
		return fmt.Errorf("probe program %s/%s: %w", tc.arch, name, err)
	}
	out := filepath.Join(dir, name)
	for _, argv := range [][]string{
		slices.Concat([]string{as}, tc.asFlags, []string{"--noexecstack", "-o", o, s}),
		{ld, "-static", "-s", "--build-id=none", "-o", out, o},
	} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("probe program %s/%s: %s: %w\n%s", tc.arch, name, strings.Join(argv, " "), err, msg)
		}
	}
	return os.Chmod(out, 0o755)
}
