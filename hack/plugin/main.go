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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/isamatch/isamatch/internal/krew"
	"github.com/isamatch/isamatch/internal/reproducible"
)

const usage = `usage: go run ./hack/plugin --version vX.Y.Z --out DIR [flags]

Builds kubectl-isa's release archives and its krew manifest into DIR.

flags:
`

// options are the parsed command line.
type options struct {
	Version   string
	Out       string
	Root      string
	Platforms []string
	// Epoch is SOURCE_DATE_EPOCH, or 1970-01-01 when unset.
	Epoch time.Time
}

var errUsage = errors.New("usage")

// parseArgs parses args. The platforms are checked against the manifest
// template by platformsOf, once --root is known.
func parseArgs(fs *flag.FlagSet, args []string, getenv func(string) string) (options, error) {
	var o options
	var platforms string
	fs.StringVar(&o.Version, "version", "", "the release, vMAJOR.MINOR.PATCH: linked into the binary and the manifest's version (required)")
	fs.StringVar(&o.Out, "out", "", "directory to write the archives and the manifest to (required)")
	fs.StringVar(&o.Root, "root", ".", "the repository root (the module, LICENSE, "+krew.TemplatePath+")")
	fs.StringVar(&platforms, "platforms", "", "comma-separated OS/ARCH to build, among the manifest template's (default: all of them)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected argument %q; every setting is a flag", errUsage, fs.Arg(0))
	}
	if o.Version == "" || o.Out == "" {
		return o, fmt.Errorf("%w: --version and --out are required", errUsage)
	}
	if err := reproducible.CheckVersion(o.Version); err != nil {
		return o, fmt.Errorf("%w: --version %w", errUsage, err)
	}
	for _, p := range strings.Split(platforms, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(o.Platforms, p) {
			o.Platforms = append(o.Platforms, p)
		}
	}
	var err error
	if o.Epoch, err = reproducible.Epoch(getenv); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	o, err := parseArgs(fs, args, os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "plugin: %v\n", err)
		return 2
	}
	tmpl, err := os.ReadFile(filepath.Join(o.Root, krew.TemplatePath))
	if err != nil {
		fmt.Fprintf(stderr, "plugin: %v (--root is the repository root)\n", err)
		return 2
	}
	if o.Platforms, err = platformsOf(tmpl, o.Platforms); err != nil {
		fmt.Fprintf(stderr, "plugin: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	files, err := release(ctx, o, tmpl)
	if err != nil {
		fmt.Fprintf(stderr, "plugin: %v\n", err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintln(stderr, "plugin: wrote", filepath.Join(o.Out, f))
	}
	return 0
}

// platformsOf checks the platforms asked for against the template's; none
// asked for is all of them.
func platformsOf(tmpl []byte, asked []string) ([]string, error) {
	known, err := krew.Platforms(tmpl)
	if err != nil {
		return nil, err
	}
	if len(asked) == 0 {
		return known, nil
	}
	for _, p := range asked {
		if !slices.Contains(known, p) {
			return nil, fmt.Errorf("%w: --platforms: %q is not a platform of %s (%s)", errUsage, p, krew.TemplatePath, strings.Join(known, ", "))
		}
	}
	return asked, nil
}
