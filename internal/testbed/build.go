package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// buildFlags are the one flag set every build of the project's binaries
// uses (the suites, the demo, the bench and hack/images): static, stripped
// and reproducible, so what a suite or the bench runs is the binary an image
// ships. One flag set also means one set of compiled packages in go's build
// cache.
var buildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// buildEnv pins cgo off and each architecture's baseline ISA, whatever the
// caller's environment says (later entries of cmd.Env win), so a binary runs
// on every node of its architecture.
var buildEnv = []string{"CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GORISCV64=rva20u64"}

// BuildBinaries builds the main packages pkgs ("./cmd/webhook") of the
// module at moduleDir for the host into dir, one binary per package named
// after the package's last path element, and returns their paths in the
// order of pkgs. Go's build cache makes a rebuild of unchanged sources quick.
func BuildBinaries(ctx context.Context, moduleDir, dir string, pkgs ...string) ([]string, error) {
	if len(pkgs) == 0 {
		return nil, errors.New("build: no packages given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build: create %s: %w", dir, err)
	}
	if err := goBuild(ctx, moduleDir, dir+string(filepath.Separator), "", "", pkgs); err != nil {
		return nil, err
	}
	bins := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		bins[i] = filepath.Join(dir, path.Base(pkg))
	}
	return bins, nil
}

// BuildBinary builds the main package pkg of the module at moduleDir into
// the file out for goos/goarch (both given, or both empty for the host).
func BuildBinary(ctx context.Context, moduleDir, pkg, out, goos, goarch string) error {
	return goBuild(ctx, moduleDir, out, goos, goarch, []string{pkg})
}

func goBuild(ctx context.Context, moduleDir, out, goos, goarch string, pkgs []string) error {
	args := append(append([]string{"build"}, buildFlags...), "-o", out)
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), buildEnv...)
	target := ""
	if goos != "" || goarch != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch)
		target = " for " + goos + "/" + goarch
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s%s: %w\n%s", strings.Join(pkgs, " "), target, err, msg)
	}
	return nil
}

// RepoRoot finds the isamatch module root from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/isamatch/isamatch\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod of github.com/isamatch/isamatch above the working directory: run from inside the repository")
		}
		dir = parent
	}
}
