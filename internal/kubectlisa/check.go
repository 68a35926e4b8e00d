package kubectlisa

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// CheckResult is where a pod asking for Request could run now.
type CheckResult struct {
	Request string `json:"request"`
	// Required is the webhook's description of the required affinity.
	Required string `json:"required"`
	// MatchingNodes is how many nodes the required affinity admits.
	MatchingNodes int `json:"matchingNodes"`
	// Nodes are those nodes, best first: the scheduler's node-affinity
	// score (Weight), then affinity, then name.
	Nodes    []CheckRow `json:"nodes"`
	Warnings []string   `json:"warnings,omitempty"`
}

// CheckRow is one node that could run the request.
type CheckRow struct {
	Node  string `json:"node"`
	ISA   string `json:"isa,omitempty"`
	Group string `json:"group,omitempty"`
	// Tier is the 1-based position of the first preferred term the node
	// matches (0: none); Weight the sum of the weights it matches.
	Tier   int   `json:"tier"`
	Weight int32 `json:"weight"`
	// Affinity is isa.Affinity of the node's ISA for the alternative it
	// fits best (1 is an exact fit).
	Affinity float64 `json:"affinity"`
}

// Check decides a pod that asks for request natively, as the webhook would
// against the cluster's nodes now, and lists the nodes that could run it.
func Check(ctx context.Context, cs kubernetes.Interface, request string) (CheckResult, error) {
	req, err := isa.ParseRequest(request)
	if err != nil {
		return CheckResult{}, fmt.Errorf("request %q: %w", clean(request, maxShown), err)
	}
	nodes, err := listNodes(ctx, cs, "")
	if err != nil {
		return CheckResult{}, err
	}
	labels := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		labels[n.Name] = n.Labels
	}
	snap := inventory.NewStatic(labels).Snapshot()
	d := engine.NewMatcher().Decide(engine.Input{Request: &req, RequestFrom: "argument", RequestText: request}, snap)
	if d.Denied != "" {
		return CheckResult{}, fmt.Errorf("the webhook would deny it: %s", d.Denied)
	}
	res := CheckResult{Request: req.String(), Required: d.RequiredText, MatchingNodes: d.MatchingNodes, Nodes: []CheckRow{}}
	for _, w := range d.Warnings {
		res.Warnings = append(res.Warnings, w.Text)
	}
	for k := range nodes {
		n := &nodes[k]
		if !requiredMatches(d.Required, n) {
			continue
		}
		row := nodeRow(n)
		c := CheckRow{Node: n.Name, ISA: row.ISA, Group: row.Group}
		c.Tier, c.Weight = preferredScore(d.Preferred, n)
		if native, _, ok := isa.NodeFromLabels(n.Labels); ok {
			for _, alt := range req.Alternatives {
				c.Affinity = max(c.Affinity, isa.Affinity(native, alt))
			}
		}
		res.Nodes = append(res.Nodes, c)
	}
	slices.SortStableFunc(res.Nodes, func(a, b CheckRow) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Affinity, a.Affinity); c != 0 {
			return c
		}
		return strings.Compare(a.Node, b.Node)
	})
	return res, nil
}

func tierString(t int) string {
	if t == 0 {
		return "-"
	}
	return fmt.Sprint(t)
}

func writeCheck(w io.Writer, res CheckResult, wide bool) error {
	fmt.Fprintf(w, "request:  %s\nrequired: %s (%d node(s) now)\n", res.Request, res.Required, res.MatchingNodes)
	for _, wn := range res.Warnings {
		fmt.Fprintf(w, "warning:  %s\n", wn)
	}
	if len(res.Nodes) == 0 {
		_, err := fmt.Fprintln(w, "no node can run it now")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := "NODE\tTIER\tWEIGHT\tAFFINITY"
	if wide {
		head += "\tGROUP\tISA"
	}
	fmt.Fprintln(tw, head)
	for _, r := range res.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.4f", r.Node, tierString(r.Tier), r.Weight, r.Affinity)
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s", orNone(r.Group), orNone(r.ISA))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newCheckCommand(o *Options) *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "check REQUEST",
		Short: "List the nodes a pod asking for REQUEST could run on now, best first",
		Long: `Decide a pod that asks for REQUEST (as the annotation isa.isamatch.io/request
would) against the cluster's nodes now, as the webhook would, and list the
nodes its required affinity admits, best first: the scheduler's node
affinity score, then instruction affinity. REQUEST may list alternatives
separated by '|'.`,
		Example: `  kubectl isa check rv64gcv
  kubectl isa check "rv64gcv_zba | x86-64-v3" -o wide
  kubectl isa check x86-64-v2 -o name`,
		Args: exactArgs(1, "REQUEST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := o.clientset()
			if err != nil {
				return err
			}
			res, err := Check(cmd.Context(), cs, args[0])
			if err != nil {
				return err
			}
			names := make([]string, len(res.Nodes))
			for k, r := range res.Nodes {
				names[k] = "node/" + r.Node
			}
			return out.print(o.Streams.Out, res, names, func(w io.Writer, wide bool) error { return writeCheck(w, res, wide) })
		},
	}
	out.add(cmd, outputJSON, outputYAML, outputWide, outputName)
	return cmd
}

// exactArgs is cobra.ExactArgs with a usage error naming what is wanted.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%w: %s takes %s, got %d argument(s)", ErrUsage, cmd.Name(), what, len(args))
		}
		return nil
	}
}
