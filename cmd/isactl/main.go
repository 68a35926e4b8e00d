package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
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

// errUsage marks errors that exit with status 2.
var errUsage = errors.New("usage error")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "normalize":
		err = normalize(rest, stdout)
	case "match":
		var ok bool
		ok, err = match(rest, stdout)
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
		err = fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
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

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string, nargs int, what string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() != nargs {
		return nil, fmt.Errorf("%w: %s needs %s, got %d argument(s)", errUsage, fs.Name(), what, fs.NArg())
	}
	return fs.Args(), nil
}

// normalized is the --json form of normalize.
type normalized struct {
	Canonical  string   `json:"canonical"`
	Short      string   `json:"short"`
	Arch       isa.Arch `json:"arch"`
	XLEN       int      `json:"xlen"`
	Extensions []string `json:"extensions"`
	Unknown    []string `json:"unknown,omitempty"`
	X86Level   int      `json:"x86Level,omitempty"`
}

func normalize(args []string, stdout io.Writer) error {
	fs := newFlags("normalize")
	asJSON := fs.Bool("json", false, "print JSON")
	from := fs.String("from", "user", "how to read STRING: user (strict), cpuinfo (a /proc/cpuinfo isa value), gcc (a -march value), elf (an ELF arch attribute)")
	rest, err := parseFlags(fs, args, 1, "one STRING")
	if err != nil {
		return err
	}
	var i isa.ISA
	switch *from {
	case "user":
		i, err = isa.Parse(rest[0])
	case "cpuinfo":
		i, err = isa.ParseCPUInfoRISCV(rest[0], isa.Hints{})
	case "gcc":
		i, err = isa.ParseGCCMarch(rest[0])
	case "elf":
		i, err = isa.ParseRISCVAttribute(rest[0])
	default:
		return fmt.Errorf("%w: --from=%q: want user, cpuinfo, gcc or elf", errUsage, *from)
	}
	if err != nil {
		return err
	}
	n := normalized{
		Canonical: i.String(), Short: i.Short(), Arch: i.Arch, XLEN: i.XLEN(),
		Extensions: i.Extensions(), Unknown: i.Unknown, X86Level: isa.X86Level(i),
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(n)
	}
	fmt.Fprintf(stdout, "canonical:  %s\n", n.Canonical)
	fmt.Fprintf(stdout, "short:      %s\n", n.Short)
	fmt.Fprintf(stdout, "arch:       %s\n", n.Arch)
	fmt.Fprintf(stdout, "xlen:       %d\n", n.XLEN)
	if n.X86Level > 0 {
		fmt.Fprintf(stdout, "x86-64 level: %d\n", n.X86Level)
	}
	fmt.Fprintf(stdout, "extensions: %s\n", strings.Join(n.Extensions, " "))
	if len(n.Unknown) > 0 {
		fmt.Fprintf(stdout, "unknown:    %s\n", strings.Join(n.Unknown, " "))
	}
	return nil
}

// match reports whether the node satisfies the request; ok=false is not an
// error (exit 1 without a message on stderr).
func match(args []string, stdout io.Writer) (bool, error) {
	rest, err := parseFlags(newFlags("match"), args, 2, "REQUEST and NODE_ISA")
	if err != nil {
		return false, err
	}
	req, err := isa.ParseRequest(rest[0])
	if err != nil {
		return false, fmt.Errorf("request: %w", err)
	}
	node, err := isa.Parse(rest[1])
	if err != nil {
		return false, fmt.Errorf("node: %w", err)
	}
	best, bestAff := -1, 0.0
	for k, alt := range req.Alternatives {
		if a := isa.Affinity(node, alt); a > bestAff {
			best, bestAff = k, a
		}
	}
	if best >= 0 {
		fmt.Fprintf(stdout, "match: %s\n", req.Alternatives[best].Short())
		fmt.Fprintf(stdout, "affinity: %.4f\n", bestAff)
		return true, nil
	}
	fmt.Fprintln(stdout, "no match")
	for _, alt := range req.Alternatives {
		fmt.Fprintf(stdout, "missing for %s: %s\n", alt.Short(), strings.Join(isa.Missing(node, alt), " "))
	}
	fmt.Fprintf(stdout, "affinity: %.4f\n", 0.0)
	return false, nil
}

func labels(args []string, stdout io.Writer) error {
	fs := newFlags("labels")
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
	rest, err := parseFlags(fs, args, 1, "one NODE_ISA")
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
	fs := newFlags("affinity")
	emulated := fs.Bool("emulated", false, "the request as isa.qemu: nodes that emulate or cross-compile for it, or run it natively")
	rest, err := parseFlags(fs, args, 1, "one REQUEST")
	if err != nil {
		return err
	}
	req, err := isa.ParseRequest(rest[0])
	if err != nil {
		return err
	}
	// The same code as the webhook's, so the output is what it writes.
	sel, err := mutate.RequiredAffinity(req, *emulated)
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
