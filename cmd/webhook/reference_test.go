package main

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/isamatch/isamatch/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite docs/reference/webhook-flags.md from parseArgs instead of comparing")

// TestReferenceFlags keeps docs/reference/webhook-flags.md equal to the
// flags parseArgs registers: name, default and help, as --help prints them.
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
			"Defaults are those outside a cluster: in a pod, `--cert-rotation` defaults to true and `--namespace` to `$POD_NAMESPACE`.",
		docgen.FlagsOf(fs))
	if err := docgen.Check(filepath.Join("..", "..", "docs", "reference", "webhook-flags.md"), page, *update); err != nil {
		t.Error(err)
	}
}
