package gobuild

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

// Options says how Binaries builds. The zero value builds for
// the host, reusing what a test run compiled.
type Options struct {
	// AsImage builds as the shipped images are built: static
	// (CGO_ENABLED=0), -trimpath, -buildvcs=false, at the architecture's
	// baseline ISA (GOAMD64=v1, GOARM64=v8.0, GORISCV64=rva20u64, whatever
	// the caller's environment says), so what the bench measures is what a
	// cluster runs. Without it the build keeps go test's compile settings
	// and so reuses the packages a test run compiled: a suite builds under
	// its timeout, and recompiling the whole module graph on a busy machine
	// does not fit in it. Either way the binary is stripped.
	AsImage bool
	// GOOS and GOARCH are the target, the host's when empty. Only with
	// AsImage (a cross build is an image build).
	GOOS, GOARCH string
	// Version and Revision, when set, are linked into internal/buildinfo
	// (-X): what --version and isamatch_build_info report. Neither may
	// contain a space.
	Version, Revision string
	// Tags are build tags (-tags), comma-separated.
	Tags string
}

// buildinfoPkg holds the variables Version and Revision set.
const buildinfoPkg = "github.com/isamatch/isamatch/internal/buildinfo"

// imageEnv pins cgo off and each architecture's baseline ISA; later entries
// of cmd.Env win over the caller's environment.
var imageEnv = []string{"CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GORISCV64=rva20u64"}

// Binaries builds the main packages pkgs ("./cmd/webhook") of the
// module at moduleDir into dir, one binary per package named after the
// package's last path element, and returns their paths in the order of
// pkgs. Every build of the project's binaries (the suites, the demo, the
// bench and hack/images) goes through it. Go's build cache makes a rebuild
// of unchanged sources quick.
func Binaries(ctx context.Context, moduleDir, dir string, o Options, pkgs ...string) ([]string, error) {
	if len(pkgs) == 0 {
		return nil, errors.New("build: no packages given")
	}
	if !o.AsImage && (o.GOOS != "" || o.GOARCH != "") {
		return nil, fmt.Errorf("build for %s/%s: a cross build needs Options.AsImage", o.GOOS, o.GOARCH)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build: create %s: %w", dir, err)
	}
	ldflags, err := linkerFlags(o)
	if err != nil {
		return nil, err
	}
	args := []string{"build", "-ldflags=" + ldflags, "-o", dir + string(filepath.Separator)}
	if o.Tags != "" {
		args = append(args, "-tags="+o.Tags)
	}
	env := os.Environ()
	target := ""
	if o.AsImage {
		args = append(args, "-trimpath", "-buildvcs=false")
		env = append(env, imageEnv...)
		if o.GOOS != "" || o.GOARCH != "" {
			env = append(env, "GOOS="+o.GOOS, "GOARCH="+o.GOARCH)
			target = " for " + o.GOOS + "/" + o.GOARCH
		}
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = moduleDir
	cmd.Env = env
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s%s: %w\n%s", strings.Join(pkgs, " "), target, err, msg)
	}
	exe := ""
	if o.GOOS == "windows" {
		exe = ".exe"
	}
	bins := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		bins[i] = filepath.Join(dir, path.Base(pkg)+exe)
	}
	return bins, nil
}

// linkerFlags is the -ldflags value of a build with o. Its text is part of
// the binary (go version -m shows it), so the order is fixed: a map's order
// would change the image digest from one build to the next.
func linkerFlags(o Options) (string, error) {
	flags := "-s -w"
	for _, kv := range [...]struct{ name, value string }{{"version", o.Version}, {"revision", o.Revision}} {
		if strings.ContainsAny(kv.value, " \t\n'\"") {
			return "", fmt.Errorf("build: %s %q: want no spaces or quotes", kv.name, kv.value)
		}
		if kv.value != "" {
			flags += " -X " + buildinfoPkg + "." + kv.name + "=" + kv.value
		}
	}
	return flags, nil
}
