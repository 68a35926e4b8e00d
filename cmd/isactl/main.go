package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/isacli"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  isactl normalize [--json] [--from=user|cpuinfo|gcc|elf] STRING
  isactl match REQUEST NODE_ISA
  isactl labels [--emulated ISA]... NODE_ISA
  isactl affinity [--emulated] REQUEST

STRING, NODE_ISA and ISA are written as a user types them: rv64gcv_zba,
RV64IMFD, rva23u64, x86-64-v3+avx512vnni, arm64+sve2. REQUEST may list
alternatives separated by '|': "rv64gcv | x86-64-v3 | arm64+sve".
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "normalize":
		err = isacli.Normalize(rest, stdout)
	case "match":
		var ok bool
		ok, err = isacli.Match(rest, stdout)
		if err == nil && !ok {
			return 1
		}
	case "labels":
		err = labels(rest, stdout)
	case "affinity":
		err = affinity(rest, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", isacli.ErrUsage, cmd)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, isacli.ErrUsage):
		fmt.Fprintf(stderr, "isactl: %v\n%s", err, usage)
		return 2
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "isactl: %v\n", err)
		return 1
	}
}

func labels(args []string, stdout io.Writer) error {
	fs := isacli.NewFlags("labels")
	var emulated []isa.ISA
	var badEmulated error
	fs.Func("emulated", "an ISA the node can also run under emulation or cross-compile for (repeatable)", func(s string) error {
		i, err := isa.Parse(s)
		if err != nil {
			badEmulated = err
			return err
		}
		emulated = append(emulated, i)
		return nil
	})
	rest, err := isacli.ParseFlags(fs, args, 1, "one NODE_ISA")
	if badEmulated != nil {
		return fmt.Errorf("--emulated: %w", badEmulated) // invalid input, not a usage error
	}
	if err != nil {
		return err
	}
	node, err := isa.Parse(rest[0])
	if err != nil {
		return err
	}
	l := isa.NodeLabels(node, emulated)
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s=%s\n", k, l[k])
	}
	return nil
}

func affinity(args []string, stdout io.Writer) error {
	fs := isacli.NewFlags("affinity")
	emulated := fs.Bool("emulated", false, "the request as isa.qemu: nodes that emulate or cross-compile for it, or run it natively")
	rest, err := isacli.ParseFlags(fs, args, 1, "one REQUEST")
	if err != nil {
		return err
	}
	req, err := isa.ParseRequest(rest[0])
	if err != nil {
		return err
	}
	// The same code as the webhook's, so the output is what it writes.
	sel, err := engine.RequiredAffinity(req, *emulated)
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}})
	if err != nil {
		return fmt.Errorf("marshal affinity: %w", err)
	}
	_, err = stdout.Write(out)
	return err
}
