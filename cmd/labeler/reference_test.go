package main

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/isamatch/isamatch/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite docs/reference/labeler-flags.md from parseArgs instead of comparing")

// TestReferenceFlags keeps docs/reference/labeler-flags.md equal to the
// flags parseArgs registers: name, default and help, as --help prints them.
func TestReferenceFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "") // the DaemonSet sets it; the default shown is empty
	fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseArgs(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseArgs(--help) = %v, want flag.ErrHelp", err)
	}
	page := docgen.FlagTable("Labeler flags", "cmd/labeler (parseArgs)",
		"The flags of the labeler binary (`cmd/labeler`, DaemonSet `isamatch-labeler` in `config/daemonset`).",
		docgen.FlagsOf(fs))
	if err := docgen.Check(filepath.Join("..", "..", "docs", "reference", "labeler-flags.md"), page, *update); err != nil {
		t.Error(err)
	}
}
