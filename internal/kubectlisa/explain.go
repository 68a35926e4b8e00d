package kubectlisa

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/misplace"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Explanation is why a pod is placed where it is, from the pod, the
// decision the webhook recorded on it and the nodes now.
type Explanation struct {
	Pod string `json:"pod"`
	// Decided is true when the webhook recorded its decision; Counts is
	// that decision as stored (isa.DecisionAnnotation) and Decision its
	// line for people: the newest IsamatchDecided or gate release Event of
	// the pod (or, for pods admitted by earlier releases, the line the
	// annotation held), shown as written (cut and sanitised), never parsed.
	Decided  bool                     `json:"decided"`
	Counts   *contract.DecisionCounts `json:"counts,omitempty"`
	Decision string                   `json:"decision,omitempty"`
	// Request and QEMU are what the pod asks for, with the key each came
	// from; RequestError is the denial a malformed one gets.
	Request      *Asked `json:"request,omitempty"`
	QEMU         *Asked `json:"qemu,omitempty"`
	RequestError string `json:"requestError,omitempty"`
	// RequestNeeds is what the request needs, decided again now against
	// the nodes (the images are not looked up): the webhook's description
	// of the required affinity, and how many nodes meet it.
	RequestNeeds      string `json:"requestNeeds,omitempty"`
	RequestNeedsNodes int    `json:"requestNeedsNodes,omitempty"`
	// Images are the pod's image references in pod order; Unresolved
	// those the decision was made without (Counts.Unresolved).
	Images     []string `json:"images"`
	Unresolved []string `json:"unresolved,omitempty"`
	// Required are the pod's required node selector terms (ORed).
	Required []string `json:"required"`
	Tiers    []Tier   `json:"tiers"`
	// Node is where the pod runs ("" while Pending), with its ISA, group,
	// the tier and the preferred weight it gets there, and whether it
	// still satisfies the pod's required node affinity.
	Node          string `json:"node,omitempty"`
	NodeISA       string `json:"nodeISA,omitempty"`
	NodeGroup     string `json:"nodeGroup,omitempty"`
	NodeTier      int    `json:"nodeTier"`
	NodeWeight    int32  `json:"nodeWeight"`
	NodeSatisfies bool   `json:"nodeSatisfiesRequired"`
}

// Asked is one request of a pod.
type Asked struct {
	Text string `json:"text"`
	From string `json:"from"`
}

// Tier is one preferred term of the pod, highest weight first, with the
// groups it names and the nodes that match it now.
type Tier struct {
	Tier   int      `json:"tier"`
	Weight int32    `json:"weight"`
	Groups []string `json:"groups,omitempty"`
	Term   string   `json:"term"`
	Nodes  []string `json:"nodes"`
}

// podName reads pod/NAME, pods/NAME, po/NAME or NAME.
func podName(ref string) (string, error) {
	kind, name, found := strings.Cut(ref, "/")
	if !found {
		return ref, nil
	}
	switch kind {
	case "pod", "pods", "po":
		if name != "" {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: %q: want pod/NAME or NAME", ErrUsage, clean(ref, maxShown))
}

// Explain reads pod ns/name and the nodes, and explains the pod.
// Requests are read from the keys keys chooses.
func Explain(ctx context.Context, cs kubernetes.Interface, ns, name string, keys engine.KeyOptions) (Explanation, error) {
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Explanation{}, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
	}
	nodes, err := listNodes(ctx, cs, "")
	if err != nil {
		return Explanation{}, err
	}
	ex := explain(pod, nodes, keys)
	if ex.Decided && ex.Decision == "" {
		line, err := decisionEvent(ctx, cs, pod)
		if err != nil {
			return Explanation{}, err
		}
		ex.Decision = clean(line, maxDecision)
	}
	return ex, nil
}

// decisionEvent returns the note of the newest isamatch Event on pod that
// tells its decision: the webhook's IsamatchDecided or the gate
// controller's release. Events expire (an hour by default), so "" is a
// normal answer for an old pod.
func decisionEvent(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) (string, error) {
	list, err := cs.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name,
	})
	if err != nil {
		return "", fmt.Errorf("list events of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	var newest *corev1.Event
	for k := range list.Items {
		e := &list.Items[k]
		if e.InvolvedObject.UID != pod.UID || (e.Reason != "IsamatchDecided" && !(strings.HasPrefix(e.Reason, "Isamatch") && e.Action == "Release")) {
			continue
		}
		if newest == nil || eventTime(e).After(eventTime(newest)) {
			newest = e
		}
	}
	if newest == nil {
		return "", nil
	}
	return newest.Message, nil
}

// eventTime is when e last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// maxDecision bounds the decision line shown.
const maxDecision = 1024

func explain(pod *corev1.Pod, nodes []corev1.Node, keys engine.KeyOptions) Explanation {
	ex := Explanation{Pod: pod.Namespace + "/" + pod.Name, Images: []string{}, Required: []string{}, Tiers: []Tier{}}
	if c, ok := misplace.Decision(pod); ok {
		ex.Decided, ex.Counts = true, &c
		for _, u := range c.Unresolved {
			ex.Unresolved = append(ex.Unresolved, clean(u.Image, maxShown)+" ("+clean(u.Kind, 32)+")")
		}
	}
	if line, ok := pod.Annotations[isa.DecisionAnnotation]; ok && !strings.HasPrefix(line, "{") {
		ex.Decision = clean(line, maxDecision) // written by an earlier release
	}

	in, msg := engine.PodInputWith(pod.ObjectMeta, keys)
	ex.RequestError = clean(msg, 4*maxShown)
	if in.Request != nil {
		ex.Request = &Asked{Text: clean(in.RequestText, maxShown), From: in.RequestFrom}
	}
	if in.QEMU != nil {
		ex.QEMU = &Asked{Text: clean(in.QEMUText, maxShown), From: in.QEMUFrom}
	}
	if msg == "" && (in.Request != nil || in.QEMU != nil) {
		labels := make(map[string]map[string]string, len(nodes))
		for _, n := range nodes {
			labels[n.Name] = n.Labels
		}
		d := engine.NewMatcher().Decide(in, inventory.NewStatic(labels).Snapshot())
		if d.Denied != "" {
			ex.RequestError = clean(d.Denied, 4*maxShown)
		} else {
			ex.RequestNeeds, ex.RequestNeedsNodes = clean(d.RequiredText, 4*maxShown), d.MatchingNodes
		}
	}

	seen := map[string]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if !seen[c.Image] {
			seen[c.Image] = true
			ex.Images = append(ex.Images, clean(c.Image, maxShown))
		}
	}

	var na *corev1.NodeAffinity
	if pod.Spec.Affinity != nil {
		na = pod.Spec.Affinity.NodeAffinity
	}
	var preferred []corev1.PreferredSchedulingTerm
	if na != nil {
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for _, t := range r.NodeSelectorTerms {
				ex.Required = append(ex.Required, clean(misplace.TermString(t), 4*maxShown))
			}
		}
		preferred = slices.Clone(na.PreferredDuringSchedulingIgnoredDuringExecution)
		slices.SortStableFunc(preferred, func(a, b corev1.PreferredSchedulingTerm) int { return cmp.Compare(b.Weight, a.Weight) })
	}
	for k, p := range preferred {
		t := Tier{Tier: k + 1, Weight: p.Weight, Term: clean(misplace.TermString(p.Preference), 4*maxShown), Nodes: []string{}}
		t.Groups = contract.TierGroups(p)
		for k := range nodes {
			if _, w := preferredScore([]corev1.PreferredSchedulingTerm{p}, &nodes[k]); w > 0 {
				t.Nodes = append(t.Nodes, nodes[k].Name)
			}
		}
		ex.Tiers = append(ex.Tiers, t)
	}

	ex.Node = pod.Spec.NodeName
	for k := range nodes {
		if n := &nodes[k]; n.Name == ex.Node {
			ex.NodeISA = misplace.NodeISA(n.Labels, n.Annotations)
			ex.NodeGroup = n.Labels[isa.GroupLabel]
			ex.NodeTier, ex.NodeWeight = preferredScore(preferred, n)
			ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n)
			ex.NodeSatisfies = ok && err == nil
		}
	}
	return ex
}

func writeExplanation(w io.Writer, ex Explanation, wide bool) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("pod:       %s\n", ex.Pod)
	switch {
	case !ex.Decided:
		p("decision:  not decided by isamatch (no %s annotation: the pod or its namespace is ignored, or it was admitted before isamatch or while the webhook was down)\n", isa.DecisionAnnotation)
	default:
		c := ex.Counts
		p("decision:  %d node(s) met the required affinity at admission", c.RequiredNodes)
		if c.NoNode {
			p(" (none: it waits for such a node)")
		}
		if c.Gate != "" {
			p("; gate %s", c.Gate)
		}
		if c.WouldDeny {
			p("; would deny (enforcement=warn)")
		}
		if c.Narrowed {
			p("; narrowed to one alternative per required term")
		}
		if c.Inferred > 0 {
			p("; %d platform(s) inferred from their entrypoint binary", c.Inferred)
		}
		if c.Fallback != "" {
			p("; fallback architecture %s", c.Fallback)
		}
		p("\n")
		if wide && ex.Decision != "" {
			p("           %s\n", ex.Decision)
		}
	}
	switch {
	case ex.RequestError != "":
		p("request:   malformed: %s\n", ex.RequestError)
	case ex.Request != nil:
		p("request:   %q (%s)\n", ex.Request.Text, ex.Request.From)
	default:
		p("request:   none\n")
	}
	if ex.QEMU != nil {
		p("qemu:      %q (%s)\n", ex.QEMU.Text, ex.QEMU.From)
	}
	if ex.RequestNeeds != "" {
		p("needs:     %s (%d node(s) now)\n", ex.RequestNeeds, ex.RequestNeedsNodes)
	}
	p("images:    %s\n", orNone(strings.Join(ex.Images, " ")))
	if len(ex.Unresolved) > 0 {
		p("           decided without the platforms of %s\n", strings.Join(ex.Unresolved, ", "))
	}
	if len(ex.Required) == 0 {
		p("required:  nothing\n")
	} else {
		p("required:\n")
	}
	for _, t := range ex.Required {
		p("  or  %s\n", t)
	}
	if len(ex.Tiers) == 0 {
		p("tiers:     none (the scheduler decides)\n")
	} else {
		p("tiers:\n")
		for _, t := range ex.Tiers {
			what := t.Term
			if len(t.Groups) > 0 {
				what = "groups " + strings.Join(t.Groups, ",")
			}
			p("  %d  weight %d  %s  nodes: %s\n", t.Tier, t.Weight, what, orNone(strings.Join(t.Nodes, ",")))
		}
	}
	switch {
	case ex.Node == "":
		p("node:      none yet (Pending)\n")
	case ex.NodeTier == 0:
		p("node:      %s (%s; group %s, no preferred term: tier -, weight 0)\n", ex.Node, ex.NodeISA, orNone(ex.NodeGroup))
	default:
		p("node:      %s (%s; group %s, tier %d, weight %d)\n", ex.Node, ex.NodeISA, orNone(ex.NodeGroup), ex.NodeTier, ex.NodeWeight)
	}
	if ex.Node != "" && !ex.NodeSatisfies {
		p("warning:   the node no longer satisfies the pod's required node affinity (its labels changed after the pod was scheduled)\n")
	}
	return nil
}

func newExplainCommand(o *Options) *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "explain (pod/NAME | NAME)",
		Short: "Explain why a pod is placed where it is",
		Long: `Explain a pod: whether isamatch decided it and the decision's numbers,
what it asks for and what that needs on the nodes now, its images, its
required and preferred node affinity with the nodes each term matches now,
and the node it runs on, its ISA and the tier it got there. -o wide adds the
decision's line as the webhook wrote it.`,
		Example: `  kubectl isa explain pod/app-7d9c -n shop
  kubectl isa explain app-7d9c -o yaml`,
		Args: exactArgs(1, "pod/NAME or NAME"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return o.completePods(cmd.Context()), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := podName(args[0])
			if err != nil {
				return err
			}
			cs, err := o.clientset()
			if err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			ex, err := Explain(cmd.Context(), cs, ns, name, o.keys())
			if err != nil {
				return err
			}
			return out.print(o.Streams.Out, ex, []string{"pod/" + name}, func(w io.Writer, wide bool) error { return writeExplanation(w, ex, wide) })
		},
	}
	out.add(cmd, outputJSON, outputYAML, outputWide, outputName)
	return cmd
}
