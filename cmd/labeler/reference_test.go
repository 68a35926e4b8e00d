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
// flags parseArgs registers (name, default and help, as --help prints
// them) and to the table of removed flags.
func TestReferenceFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "") // the DaemonSet sets it; the default shown is empty
	fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseArgs(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseArgs(--help) = %v, want flag.ErrHelp", err)
	}
	page := docgen.FlagTable("Labeler flags", "cmd/labeler (parseArgs)",
		"The flags of the labeler binary (`cmd/labeler`, DaemonSet `isamatch-labeler` in `config/daemonset`). "+
			"Every other setting is a field of the LabelerConfiguration file `--config` names "+
			"([configuration](../configuration.md)).",
		docgen.FlagsOf(fs))
	rows := make([]docgen.RemovedFlag, 0, len(removedFlags))
	for _, r := range removedFlags {
		rows = append(rows, docgen.RemovedFlag{Name: r.Name, Field: r.Field})
	}
	page = append(page, docgen.RemovedFlagsSection("These flags were removed: each setting is the field of the file `--config` names. "+
		"Given on the command line, a removed flag fails (exit code 2) with an error naming its field.", "LabelerConfiguration", rows)...)
	if err := docgen.Check(filepath.Join("..", "..", "docs", "reference", "labeler-flags.md"), page, *update); err != nil {
		t.Error(err)
	}
}
