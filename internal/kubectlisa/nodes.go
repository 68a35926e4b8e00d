package kubectlisa

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/pkg/isa"
)

// NodeRow is one node as isamatch sees it.
type NodeRow struct {
	Name string `json:"name"`
	// Arch is the native architecture isamatch found, else the kubelet's
	// kubernetes.io/arch.
	Arch string `json:"arch"`
	// ISA is the native ISA in compact form (isa.ISA.Compact), from the
	// node's labels; from the labeler's annotation when the labels say
	// nothing; empty when neither does.
	ISA   string `json:"isa,omitempty"`
	Group string `json:"group,omitempty"`
	// Emulates lists the architectures the node emulates or
	// cross-compiles for (qemu.isamatch.io labels).
	Emulates []string `json:"emulates,omitempty"`
	// Labelled is false for a node isamatch has not labelled.
	Labelled bool `json:"labelled"`
}

// maxShown bounds every value read from a node or pod that is printed.
const maxShown = 96

// nodeRow reads one node.
func nodeRow(n *corev1.Node) NodeRow {
	r := NodeRow{Name: n.Name, Arch: clean(n.Labels[isa.KubeArchLabel], maxShown), Group: clean(n.Labels[isa.GroupLabel], maxShown)}
	native, emulated, ok := isa.NodeFromLabels(n.Labels)
	if ok {
		r.Labelled, r.Arch, r.ISA = true, string(native.Arch), native.Compact()
	} else if a, found := n.Annotations[isa.NativeISAAnnotation]; found {
		if i, err := isa.Parse(a); err == nil {
			r.ISA = i.Compact()
		} else {
			r.ISA = clean(a, maxShown)
		}
	}
	for _, e := range emulated {
		r.Emulates = append(r.Emulates, string(e.Arch))
	}
	return r
}

// listNodes returns the nodes selector (a label selector, "" for all)
// selects, sorted by name.
func listNodes(ctx context.Context, cs kubernetes.Interface, selector string) ([]corev1.Node, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// Nodes returns a row per node selector selects, sorted by name.
func Nodes(ctx context.Context, cs kubernetes.Interface, selector string) ([]NodeRow, error) {
	nodes, err := listNodes(ctx, cs, selector)
	if err != nil {
		return nil, err
	}
	rows := make([]NodeRow, len(nodes))
	for k := range nodes {
		rows[k] = nodeRow(&nodes[k])
	}
	return rows, nil
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func writeNodes(w io.Writer, rows []NodeRow, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := "NAME\tARCH\tISA\tGROUP"
	if wide {
		head += "\tEMULATES\tLABELLED"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", r.Name, orNone(r.Arch), orNone(r.ISA), orNone(r.Group))
		if wide {
			fmt.Fprintf(tw, "\t%s\t%t", orNone(strings.Join(r.Emulates, ",")), r.Labelled)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newNodesCommand(o *Options) *cobra.Command {
	var (
		out      outputFlag
		selector string
	)
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List nodes with the ISA isamatch found on each",
		Long: `List nodes with their native architecture and ISA, their ISA group and,
with -o wide, what they emulate and whether isamatch's labeler labelled them.`,
		Example: `  kubectl isa nodes
  kubectl isa nodes -o wide
  kubectl isa nodes -l kubernetes.io/arch=riscv64 -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := o.clientset()
			if err != nil {
				return err
			}
			rows, err := Nodes(cmd.Context(), cs, selector)
			if err != nil {
				return err
			}
			names := make([]string, len(rows))
			for k, r := range rows {
				names[k] = "node/" + r.Name
			}
			return out.print(o.Streams.Out, rows, names, func(w io.Writer, wide bool) error { return writeNodes(w, rows, wide) })
		},
	}
	out.add(cmd, outputJSON, outputYAML, outputWide, outputName)
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter nodes on, as kubectl's")
	return cmd
}
