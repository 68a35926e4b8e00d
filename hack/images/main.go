package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/isamatch/isamatch/internal/reproducible"
)

const usage = `usage: go run ./hack/images --repo REGISTRY/PREFIX --tag TAG [flags]

Builds one multi-platform image index per binary (REGISTRY/PREFIX/labeler:TAG,
REGISTRY/PREFIX/webhook:TAG) without a Docker daemon. Without --push or
--oci-layout it only builds and prints the digests a push would give.

flags:
`

// options are the parsed command line.
type options struct {
	Repo      string
	Tag       string
	Platforms []Platform
	Push      bool
	OCILayout string
	Insecure  bool
	CA        string
	Apps      []App
	CABundle  string
	Source    string
	Revision  string
	// Epoch is SOURCE_DATE_EPOCH, or 1970-01-01 when unset.
	Epoch time.Time
}

// errUsage marks errors that exit with status 2.
var errUsage = errors.New("usage")

// parseArgs parses args into options; apps are the images it may build
// (--only picks among them) and getenv reads SOURCE_DATE_EPOCH.
func parseArgs(fs *flag.FlagSet, args []string, getenv func(string) string, apps []App) (options, error) {
	var o options
	var platforms, only string
	names := make([]string, len(apps))
	for i, a := range apps {
		names[i] = a.Name
	}
	fs.StringVar(&o.Repo, "repo", "", "registry and prefix the images go under: ghcr.io/you gives ghcr.io/you/labeler (required)")
	fs.StringVar(&o.Tag, "tag", "", "image tag, also the org.opencontainers.image.version label (required)")
	fs.StringVar(&platforms, "platforms", joinPlatforms(supportedPlatforms), "comma-separated OS/ARCH list")
	fs.BoolVar(&o.Push, "push", false, "push to the registry (credentials from the docker config, as docker login writes it)")
	fs.StringVar(&o.OCILayout, "oci-layout", "", "write an OCI image layout to this directory instead of pushing")
	fs.BoolVar(&o.Insecure, "insecure", false, "allow plain HTTP and unverified TLS to the registry")
	fs.StringVar(&o.CA, "ca", "", "PEM file with the CA that signed the registry's certificate (added to the system roots)")
	fs.StringVar(&only, "only", strings.Join(names, ","), "comma-separated images to build")
	fs.StringVar(&o.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the images for the webhook's TLS to registries")
	fs.StringVar(&o.Source, "source", "https://github.com/isamatch/isamatch", "org.opencontainers.image.source label")
	fs.StringVar(&o.Revision, "revision", "", "org.opencontainers.image.revision label (default: git HEAD, -dirty if tracked files changed)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected argument %q; every setting is a flag (--repo, --tag, ...)", errUsage, fs.Arg(0))
	}
	if o.Repo == "" {
		return o, fmt.Errorf("%w: --repo is required: pass the registry and prefix the images go under, e.g. --repo ghcr.io/you (gives ghcr.io/you/labeler)", errUsage)
	}
	if o.Tag == "" {
		return o, fmt.Errorf("%w: --tag is required: pass e.g. --tag v0.1.0", errUsage)
	}
	if o.Push && o.OCILayout != "" {
		return o, fmt.Errorf("%w: --push and --oci-layout %s exclude each other: pass one (or neither to only build)", errUsage, o.OCILayout)
	}
	var err error
	if o.Platforms, err = parsePlatforms(platforms); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if o.Apps, err = pickApps(only, apps); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	for _, a := range o.Apps {
		if _, err := o.tag(a); err != nil {
			return o, fmt.Errorf("%w: --repo %q --tag %q do not make a valid image reference (%w); pass --repo REGISTRY/PREFIX such as ghcr.io/you and a tag such as v0.1.0", errUsage, o.Repo, o.Tag, err)
		}
	}
	if o.Epoch, err = reproducible.Epoch(getenv); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	return o, nil
}

// tag is the reference app is pushed to.
func (o options) tag(a App) (name.Tag, error) {
	var opts []name.Option
	if o.Insecure {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(o.Repo+"/"+a.Name+":"+o.Tag, append(opts, name.StrictValidation)...)
}

func parsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(supportedPlatforms, func(p Platform) bool { return p.String() == f })
		if i < 0 {
			return nil, fmt.Errorf("unknown platform %q in --platforms: choose from %s", f, joinPlatforms(supportedPlatforms))
		}
		if slices.Contains(out, supportedPlatforms[i]) {
			return nil, fmt.Errorf("platform %q listed twice in --platforms: list each once", f)
		}
		out = append(out, supportedPlatforms[i])
	}
	return out, nil
}

func pickApps(s string, apps []App) ([]App, error) {
	var out []App
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(apps, func(a App) bool { return a.Name == f })
		if i < 0 {
			names := make([]string, len(apps))
			for j, a := range apps {
				names[j] = a.Name
			}
			return nil, fmt.Errorf("unknown image %q in --only: choose from %s", f, strings.Join(names, ", "))
		}
		if !slices.ContainsFunc(out, func(a App) bool { return a.Name == f }) {
			out = append(out, apps[i])
		}
	}
	return out, nil
}

func joinPlatforms(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, args, os.Getenv, defaultApps)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "images: %v\n\n%s", err, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := buildAndPublish(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "images: %v\n", err)
		return 1
	}
	return 0
}

// buildAndPublish builds every image of o and pushes it, writes it to the
// OCI layout, or neither; the summary goes to stdout, progress to progress.
func buildAndPublish(ctx context.Context, o options, stdout, progress io.Writer) error {
	moduleDir, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	bundle, err := os.ReadFile(o.CABundle)
	if err != nil {
		return fmt.Errorf("read the CA bundle the images carry: %w; install it (apt-get install ca-certificates) or pass --ca-bundle FILE", err)
	}
	if o.Revision == "" {
		o.Revision = gitRevision(ctx, moduleDir)
	}
	work, err := os.MkdirTemp("", "isamatch-images-")
	if err != nil {
		return fmt.Errorf("work directory: %w", err)
	}
	defer os.RemoveAll(work)
	cfg := buildConfig{
		ModuleDir: moduleDir,
		WorkDir:   work,
		Platforms: o.Platforms,
		Epoch:     o.Epoch,
		CABundle:  bundle,
		Source:    o.Source,
		Revision:  o.Revision,
		Version:   o.Tag,
		Progress:  progress,
	}
	pub, err := newPublisher(o)
	if err != nil {
		return err
	}
	var results []result
	for _, app := range o.Apps {
		idx, err := buildIndex(ctx, cfg, app)
		if err != nil {
			return err
		}
		res, err := pub.publish(ctx, app, idx)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	writeSummary(stdout, o, results)
	return nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the isamatch module: run go run ./hack/images from the repository")
	}
	return filepath.Dir(gomod), nil
}

// gitRevision is HEAD's commit, with "-dirty" when tracked files differ
// from it; empty when dir is not a git checkout.
func gitRevision(ctx context.Context, dir string) string {
	head, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(head))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(status))) > 0 {
		rev += "-dirty"
	}
	return rev
}
