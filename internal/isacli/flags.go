package isacli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrUsage marks errors that exit with status 2.
var ErrUsage = errors.New("usage error")

// NewFlags returns a flag set that reports errors instead of exiting.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// ParseFlags parses args into fs and checks that nargs arguments remain;
// what names them in the usage error.
func ParseFlags(fs *flag.FlagSet, args []string, nargs int, what string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrUsage, fs.Name(), err)
	}
	if fs.NArg() != nargs {
		return nil, fmt.Errorf("%w: %s needs %s, got %d argument(s)", ErrUsage, fs.Name(), what, fs.NArg())
	}
	return fs.Args(), nil
}
