package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/isamatch/isamatch/internal/isacli"
	"github.com/isamatch/isamatch/internal/kubectlisa"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  kubectl isa nodes [-o json]
  kubectl isa check [-o json] REQUEST
  kubectl isa explain [-n NAMESPACE] [-o json] pod/NAME
  kubectl isa normalize [--json] [--from=user|cpuinfo|gcc|elf] ISA
  kubectl isa match REQUEST NODE_ISA

Cluster flags: --kubeconfig FILE, --context NAME, -n/--namespace NS.
REQUEST may list alternatives separated by '|': "rv64gcv | x86-64-v3".
`

// parseArgs reads the flags, anywhere among the arguments as kubectl
// allows, and the command with its arguments.
func parseArgs(fs *flag.FlagSet, args []string) (kubectlisa.Options, error) {
	var o kubectlisa.Options
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context to use")
	fs.StringVar(&o.Namespace, "namespace", "", "namespace of the pod (default: the context's)")
	fs.StringVar(&o.Namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&o.Output, "output", "", "output format: json (default: a table)")
	fs.StringVar(&o.Output, "o", "", "shorthand for --output")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) > 0 {
		o.Command, o.Args = pos[0], pos[1:]
	}
	return o, o.Validate()
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "normalize":
		err = isacli.Normalize(args[1:], stdout)
	case "match":
		var ok bool
		if ok, err = isacli.Match(args[1:], stdout); err == nil && !ok {
			return 1
		}
	default:
		err = runCluster(args, stdout)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case errors.Is(err, kubectlisa.ErrUsage), errors.Is(err, isacli.ErrUsage):
		fmt.Fprintf(stderr, "kubectl-isa: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "kubectl-isa: %v\n", err)
		return 1
	}
}

func runCluster(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kubectl-isa", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, kubectlisa.ErrUsage) {
			return err
		}
		return fmt.Errorf("%w: %w", kubectlisa.ErrUsage, err)
	}
	cs, ns, err := kubectlisa.NewClient(o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return kubectlisa.Execute(ctx, cs, ns, o, stdout)
}
