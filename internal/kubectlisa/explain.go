package kubectlisa

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// Explanation is why a pod is placed where it is.
type Explanation struct {
	Pod string `json:"pod"`
	// Decided is true when the webhook wrote its decision annotation;
	// Decision is that annotation (the decision's numbers) and Detail the
	// readable decision of the pod's newest isamatch Event (IsamatchDecided,
	// or the gate controller's release), "" once Events have expired.
	Decided  bool   `json:"decided"`
	Decision string `json:"decision,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Request and QEMU are what the pod asks for, with the key each came
	// from; RequestError is the denial a malformed one gets.
	Request      *Asked       `json:"request,omitempty"`
	QEMU         *Asked       `json:"qemu,omitempty"`
	RequestError string       `json:"requestError,omitempty"`
	Images       []ImageEntry `json:"images"`
	// RequiredText is the webhook's description of the required affinity;
	// Required the pod's required node selector terms (ORed).
	RequiredText string   `json:"requiredText,omitempty"`
	Required     []string `json:"required"`
	Tiers        []Tier   `json:"tiers"`
	// Node is where the pod runs ("" while Pending), with the tier and the
	// preferred weight it gets there.
	Node       string `json:"node,omitempty"`
	NodeGroup  string `json:"nodeGroup,omitempty"`
	NodeTier   int    `json:"nodeTier"`
	NodeWeight int32  `json:"nodeWeight"`
}

// Asked is one request of a pod.
type Asked struct {
	Text string `json:"text"`
	From string `json:"from"`
}

// ImageEntry is one image of the pod; Platforms are those the decision
// recorded ("error KIND" when resolution failed), nil when not recorded.
type ImageEntry struct {
	Ref       string   `json:"ref"`
	Platforms []string `json:"platforms,omitempty"`
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
	return "", fmt.Errorf("%w: %q: explain takes pod/NAME or NAME", ErrUsage, clean(ref, maxShown))
}

// Explain reads pod ns/name, the nodes, and the decision recorded on it.
func Explain(ctx context.Context, cs kubernetes.Interface, ns, name string) (Explanation, error) {
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Explanation{}, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
	}
	nodes, err := listNodes(ctx, cs)
	if err != nil {
		return Explanation{}, err
	}
	detail, err := decisionEvent(ctx, cs, pod)
	if err != nil {
		return Explanation{}, err
	}
	return explain(pod, nodes, detail), nil
}

// decisionEvent returns the note of the newest isamatch Event on pod that
// carries its readable decision, "" when there is none.
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
		if e.InvolvedObject.UID != pod.UID || !strings.HasPrefix(e.Reason, "Isamatch") || (e.Reason != "IsamatchDecided" && e.Action != "Release") {
			continue
		}
		if newest == nil || e.EventTime.After(newest.EventTime.Time) {
			newest = e
		}
	}
	if newest == nil {
		return "", nil
	}
	return newest.Message, nil
}

func explain(pod *corev1.Pod, nodes []corev1.Node, detail string) Explanation {
	ex := Explanation{Pod: pod.Namespace + "/" + pod.Name, Images: []ImageEntry{}, Required: []string{}, Tiers: []Tier{}}
	decision, ok := pod.Annotations[isa.DecisionAnnotation]
	ex.Decided = ok
	if ok {
		ex.Decision = clean(decision, maxDecision)
	}
	if !strings.HasPrefix(decision, "{") {
		detail = decision // the readable line of the earlier format
	}
	ex.Detail = clean(detail, maxDecision)
	if t, found := summaryPart(detail, "required"); found {
		ex.RequiredText = clean(t, 4*maxShown)
	}

	in, msg := mutate.PodInput(pod.ObjectMeta)
	ex.RequestError = clean(msg, 4*maxShown)
	if in.Request != nil {
		ex.Request = &Asked{Text: clean(in.RequestText, maxShown), From: in.RequestFrom}
	}
	if in.QEMU != nil {
		ex.QEMU = &Asked{Text: clean(in.QEMUText, maxShown), From: in.QEMUFrom}
	}

	platforms := summaryImages(detail)
	seen := map[string]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if seen[c.Image] {
			continue
		}
		seen[c.Image] = true
		ex.Images = append(ex.Images, ImageEntry{Ref: c.Image, Platforms: platforms[c.Image]})
	}

	var na *corev1.NodeAffinity
	if pod.Spec.Affinity != nil {
		na = pod.Spec.Affinity.NodeAffinity
	}
	var preferred []corev1.PreferredSchedulingTerm
	if na != nil {
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for _, t := range r.NodeSelectorTerms {
				ex.Required = append(ex.Required, termString(t))
			}
		}
		preferred = slices.Clone(na.PreferredDuringSchedulingIgnoredDuringExecution)
		slices.SortStableFunc(preferred, func(a, b corev1.PreferredSchedulingTerm) int { return cmp.Compare(b.Weight, a.Weight) })
	}
	for k, p := range preferred {
		t := Tier{Tier: k + 1, Weight: p.Weight, Term: termString(p.Preference), Nodes: []string{}}
		for _, e := range p.Preference.MatchExpressions {
			if e.Key == isa.GroupLabel && e.Operator == corev1.NodeSelectorOpIn {
				t.Groups = append(t.Groups, e.Values...)
			}
		}
		for _, n := range nodes {
			if termMatches(p.Preference, n.Labels) {
				t.Nodes = append(t.Nodes, n.Name)
			}
		}
		ex.Tiers = append(ex.Tiers, t)
	}

	ex.Node = pod.Spec.NodeName
	for _, n := range nodes {
		if n.Name == ex.Node {
			ex.NodeGroup = n.Labels[isa.GroupLabel]
			ex.NodeTier, ex.NodeWeight = preferredScore(preferred, n.Labels)
		}
	}
	return ex
}

func writeExplanation(w io.Writer, ex Explanation) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("pod:       %s\n", ex.Pod)
	if !ex.Decided {
		p("decision:  not decided by isamatch (no %s annotation: the pod or its namespace is ignored, or it was admitted before isamatch or while the webhook was down)\n", isa.DecisionAnnotation)
	} else {
		p("decision:  %s\n", ex.Decision)
		if ex.Detail != "" && ex.Detail != ex.Decision {
			p("detail:    %s\n", ex.Detail)
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
	p("images:\n")
	for _, img := range ex.Images {
		pl := "platforms not recorded"
		if img.Platforms != nil {
			pl = strings.Join(img.Platforms, " ")
		}
		p("  %s: %s\n", img.Ref, pl)
	}
	if ex.RequiredText != "" {
		p("required:  %s\n", ex.RequiredText)
	} else if len(ex.Required) == 0 {
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
		p("node:      %s (group %s, no preferred term: tier -, weight 0)\n", ex.Node, orNone(ex.NodeGroup))
	default:
		p("node:      %s (group %s, tier %d, weight %d)\n", ex.Node, orNone(ex.NodeGroup), ex.NodeTier, ex.NodeWeight)
	}
	return nil
}
