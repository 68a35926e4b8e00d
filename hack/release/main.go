package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/isamatch/isamatch/internal/reproducible"
)

const usage = `usage: go -C hack/release run . --repo REGISTRY/PREFIX --version vX.Y.Z --oci-layout DIR --dist DIR [flags]

Pushes the image indexes of an OCI layout written by hack/images, attaches an
SPDX SBOM to each as an OCI referrer, and writes dist/ (make release runs it).

flags:
`

// options are the parsed command line.
type options struct {
	Repo      string
	Version   string
	OCILayout string
	Dist      string
	// Plugin is the directory hack/plugin wrote the kubectl plugin's
	// archives and krew manifest to; its files join dist/ ("": none).
	Plugin string
	// Root is the repository root: config/ and charts/isamatch.
	Root     string
	Insecure bool
	CA       string
	// Epoch is SOURCE_DATE_EPOCH, or 1970-01-01 when unset: every time in
	// the SBOMs and the chart archive, so a release can be rebuilt byte
	// for byte.
	Epoch time.Time
}

var errUsage = errors.New("usage")

func parseArgs(fs *flag.FlagSet, args []string, getenv func(string) string) (options, error) {
	var o options
	fs.StringVar(&o.Repo, "repo", "", "registry and prefix the images were built for: REGISTRY/PREFIX (required)")
	fs.StringVar(&o.Version, "version", "", "the release, vMAJOR.MINOR.PATCH: the images' tag and the chart's version (required)")
	fs.StringVar(&o.OCILayout, "oci-layout", "", "the OCI image layout hack/images wrote (required)")
	fs.StringVar(&o.Dist, "dist", "", "directory to write the release files to; emptied first (required)")
	fs.StringVar(&o.Root, "root", "../..", "the repository root (config/, charts/isamatch)")
	fs.StringVar(&o.Plugin, "plugin", "", "directory of the kubectl plugin's archives and krew manifest (go run ./hack/plugin --out DIR): each file joins dist/ and SHA256SUMS")
	fs.BoolVar(&o.Insecure, "insecure", false, "allow plain HTTP and unverified TLS to the registry")
	fs.StringVar(&o.CA, "ca", "", "PEM file with the CA that signed the registry's certificate (added to the system roots)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected argument %q; every setting is a flag", errUsage, fs.Arg(0))
	}
	for _, f := range []struct{ name, v string }{{"repo", o.Repo}, {"version", o.Version}, {"oci-layout", o.OCILayout}, {"dist", o.Dist}} {
		if f.v == "" {
			return o, fmt.Errorf("%w: --%s is required", errUsage, f.name)
		}
	}
	if err := reproducible.CheckVersion(o.Version); err != nil {
		return o, fmt.Errorf("%w: --version %w", errUsage, err)
	}
	if _, err := name.NewRepository(o.Repo+"/labeler", name.StrictValidation); err != nil {
		return o, fmt.Errorf("%w: --repo %q: %w; pass REGISTRY/PREFIX such as ghcr.io/you", errUsage, o.Repo, err)
	}
	if abs, err := filepath.Abs(o.Dist); err == nil && (abs == "/" || abs == filepath.Clean(os.Getenv("HOME"))) {
		return o, fmt.Errorf("%w: --dist %s would be emptied: pass a directory of its own, such as dist", errUsage, o.Dist)
	}
	var err error
	if o.Epoch, err = reproducible.Epoch(getenv); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, args, os.Getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "release: %v\n\n%s", err, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := release(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	return 0
}

// release publishes every image of the layout and writes dist/.
func release(ctx context.Context, o options, stdout io.Writer) error {
	images, err := readLayout(o)
	if err != nil {
		return err
	}
	reg, err := newRegistry(ctx, o)
	if err != nil {
		return err
	}
	var published []published
	for _, img := range images {
		p, err := publish(reg, o, img)
		if err != nil {
			return err
		}
		published = append(published, p)
		fmt.Fprintf(stdout, "pushed %s@%s (%d platforms), SBOM %s\n", p.Tag, p.Digest, len(p.Platforms), p.SBOMDigest)
	}
	files, err := writeDist(ctx, o, reg, published)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(o.Dist, f))
	}
	return nil
}
