// Command rebalancer is descheduler (sigs.k8s.io/descheduler) with the
// isamatch plugins ISAFit and WeightedLoad registered beside descheduler's
// own plugins, and cycles started by events as well as by the timer
// (package trigger). Its flags and policy file are descheduler's, plus
// the trigger flags (--trigger-on-node-join, --trigger-on-threshold,
// --trigger-min-interval, --trigger-node-cooldown,
// --trigger-threshold-rearm) and the per-namespace eviction budget
// (--namespace-eviction-budget, --namespace-eviction-window).
package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"

	"github.com/isamatch/isamatch/rebalance/pkg/budget"
	"github.com/isamatch/isamatch/rebalance/pkg/trigger"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cmd, err := newCommand(os.Stdout)
	if err != nil {
		_, _ = os.Stderr.WriteString("rebalancer: " + err.Error() + "\n")
		return 1
	}
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// newCommand is descheduler's command (app.NewDeschedulerCommand: its
// flags, logging and plugin registry) with the trigger flags, running
// serve instead of descheduler's app.Run.
func newCommand(out io.Writer) (*cobra.Command, error) {
	s, err := options.NewDeschedulerServer()
	if err != nil {
		return nil, err
	}
	trig := trigger.DefaultOptions()
	budgetOpts := budget.DefaultOptions()
	featureGate := featuregate.NewFeatureGate()
	logConfig := logsapi.NewLoggingConfiguration()
	cmd := &cobra.Command{
		Use:   "rebalancer",
		Short: "isamatch's build of descheduler",
		Long:  "The rebalancer evicts pods that run on a worse isamatch tier than a node with room offers, or on nodes loaded above the cluster's size-weighted average.",
		PreRunE: func(*cobra.Command, []string) error {
			logs.InitLogs()
			if err := logsapi.ValidateAndApply(logConfig, featureGate); err != nil {
				return err
			}
			if err := trig.Validate(); err != nil {
				return err
			}
			return budgetOpts.Validate()
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if err := s.Apply(); err != nil {
				return err
			}
			return serve(c.Context(), s, trig, budgetOpts)
		},
	}
	cmd.SetOut(out)
	cmd.AddCommand(app.NewVersionCommand())
	flags := cmd.Flags()
	s.AddFlags(flags)
	trig.AddFlags(flags)
	budgetOpts.AddFlags(flags)
	runtime.Must(logsapi.AddFeatureGates(featureGate))
	logsapi.AddFlags(logConfig, flags)
	return cmd, nil
}
