package main

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/isamatch/isamatch/internal/configflag"
	"github.com/isamatch/isamatch/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite docs/reference/webhook-flags.md from parseArgs instead of comparing")

// TestReferenceFlags keeps docs/reference/webhook-flags.md equal to the
// flags parseArgs registers (name, default and help, as --help prints
// them) and to the table of removed flags.
func TestReferenceFlags(t *testing.T) {
	// Defaults that read the environment are documented as outside a cluster.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv(NamespaceEnv, "")
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseArgs(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseArgs(--help) = %v, want flag.ErrHelp", err)
	}
	page := docgen.FlagTable("Webhook flags", "cmd/webhook (parseArgs)",
		"The flags of the webhook binary (`cmd/webhook`, Deployment `isamatch-webhook` in `config/webhook`). "+
			"Every other setting is a field of the WebhookConfiguration file `--config` names "+
			"([configuration](../configuration.md)).",
		docgen.FlagsOf(fs))
	page = append(page, docgen.RemovedFlagsSection(removedIntro, "WebhookConfiguration", removedRows(removedFlags))...)
	if err := docgen.Check(filepath.Join("..", "..", "docs", "reference", "webhook-flags.md"), page, *update); err != nil {
		t.Error(err)
	}
}

// removedIntro introduces the migration table of the reference.
const removedIntro = "These flags were removed: each setting is the field of the file `--config` names. " +
	"Given on the command line, a removed flag fails (exit code 2) with an error naming its field."

// removedRows are the removed flags as the reference lists them.
func removedRows(removed []configflag.Removed) []docgen.RemovedFlag {
	rows := make([]docgen.RemovedFlag, 0, len(removed))
	for _, r := range removed {
		rows = append(rows, docgen.RemovedFlag{Name: r.Name, Field: r.Field})
	}
	return rows
}
