// Command rebalancer is descheduler (sigs.k8s.io/descheduler) with the
// isamatch plugins ISAFit and WeightedLoad registered beside descheduler's
// own plugins. Its flags and policy file are descheduler's.
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/isamatch/isamatch/rebalance/pkg/isafit"
	"github.com/isamatch/isamatch/rebalance/pkg/weightedload"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cmd := app.NewDeschedulerCommand(os.Stdout)
	cmd.AddCommand(app.NewVersionCommand())
	cmd.SetArgs(args)
	// descheduler's PreRunE builds its global plugin registry from scratch
	// (descheduler.SetupPlugins); isamatch's plugins join it right after.
	setup := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, a []string) error {
		if err := setup(c, a); err != nil {
			return err
		}
		isafit.Register(pluginregistry.PluginRegistry)
		weightedload.Register(pluginregistry.PluginRegistry)
		return nil
	}
	return cli.Run(cmd)
}
