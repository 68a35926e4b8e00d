package main

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/isamatch/isamatch/internal/docgen"
	"github.com/isamatch/isamatch/internal/kubectlisa"
)

var update = flag.Bool("update", false, "rewrite docs/reference/kubectl-isa.md from the command tree instead of comparing")

// TestReferenceCommands keeps docs/reference/kubectl-isa.md equal to the
// plugin's command tree: every command, its summary and its own flags
// (the root's persistent flags, kubectl's, listed once under the root).
func TestReferenceCommands(t *testing.T) {
	// --cache-dir's default is $KUBECACHEDIR, else under $HOME: show the latter.
	t.Setenv("KUBECACHEDIR", "~/.kube/cache")
	root := kubectlisa.NewCommand(genericiooptions.NewTestIOStreamsDiscard())
	var cmds []docgen.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		fs := c.LocalNonPersistentFlags()
		if c == root {
			fs = c.LocalFlags()
		}
		cmds = append(cmds, docgen.Command{Path: c.CommandPath(), Short: c.Short, Flags: pflags(fs)})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	page := docgen.CommandsPage("kubectl isa", "internal/kubectlisa (NewCommand)",
		"The kubectl plugin (`cmd/kubectl-isa`): every command and its own flags. The flags of `kubectl isa` itself (kubectl's: `--kubeconfig`, `--context`, `-n`, ...) apply to every command.",
		cmds)
	if err := docgen.Check(filepath.Join("..", "..", "docs", "reference", "kubectl-isa.md"), page, *update); err != nil {
		t.Error(err)
	}
}

// pflags lists the visible flags of fs.
func pflags(fs *pflag.FlagSet) []docgen.Flag {
	var out []docgen.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			out = append(out, docgen.Flag{Name: f.Name, Shorthand: f.Shorthand, Default: f.DefValue, Usage: f.Usage})
		}
	})
	return out
}
