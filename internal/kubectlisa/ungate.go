package kubectlisa

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"

	"github.com/isamatch/isamatch/pkg/gate/release"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/registry"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Results of ungate for one pod.
const (
	UngateReleased = "released"
	UngateNotGated = "notGated"
)

// UngateResult is what ungate did to one pod.
type UngateResult struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	// Result is UngateReleased, UngateNotGated or "error: ..." .
	Result string `json:"result"`
}

// errNotLookedUp is what ungate's resolver answers: it never reaches a
// registry. The gate controller's release from the cache never asks it.
var errNotLookedUp = errors.New("kubectl isa ungate does not look images up")

// Ungater releases gated pods without the webhook, exactly as the gate
// controller releases a pod past its bound: mutate.PodMutator.ReleaseGated
// from the resolver's cache alone, written by release.Writer. Its resolver
// holds nothing, so every image is left out of the affinity as unresolved
// and the decision records them in DecisionCounts.Unresolved; the pod's
// own request still counts. The Event (IsamatchGateTimeout) is recorded by
// kubectl-isa.
type Ungater struct {
	cs kubernetes.Interface
	m  *mutate.PodMutator
	w  *release.Writer
}

// UngateOptions are the webhook's settings an Ungater releases with.
type UngateOptions struct {
	// Keys are the pod keys requests are read from.
	Keys engine.KeyOptions
	// Enforcement is the webhook's mode (default deny); NamespaceModes
	// the modes a namespace's isa.EnforcementLabel may choose instead.
	Enforcement    string
	NamespaceModes []string
}

// NewUngater returns an Ungater writing through cs, deciding against the
// nodes of cs now as o says, and recording Events with cs (warnings on
// warn).
func NewUngater(ctx context.Context, cs kubernetes.Interface, warn io.Writer, o UngateOptions) (*Ungater, error) {
	nodes, err := listNodes(ctx, cs, "")
	if err != nil {
		return nil, err
	}
	labels := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		labels[n.Name] = n.Labels
	}
	nothing := mutate.ImageResolverFunc(func(context.Context, string, registry.PullAuth) ([]registry.Platform, error) {
		return nil, errNotLookedUp
	})
	m := mutate.NewPodMutator(nothing, inventory.NewStatic(labels), mutate.Options{
		Keys: o.Keys, Enforcement: o.Enforcement, NamespaceModes: o.NamespaceModes,
		NamespaceEnforcement: namespaceLabel(cs, warn),
	})
	return &Ungater{cs: cs, m: m, w: &release.Writer{Patch: release.ClientsetPatcher(cs), Recorder: syncRecorder{cs, warn}}}, nil
}

// Ungate releases pod if it still carries the gate when read again. A pod
// that changed between the read and the write is read and decided again,
// as the gate controller's next call would.
func (u *Ungater) Ungate(ctx context.Context, pod *corev1.Pod) UngateResult {
	res := UngateResult{Namespace: pod.Namespace, Pod: pod.Name, Result: UngateReleased}
	if !engine.HasGate(pod.Spec.SchedulingGates) {
		res.Result = UngateNotGated
		return res
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := u.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !engine.HasGate(cur.Spec.SchedulingGates) || cur.DeletionTimestamp != nil {
			res.Result = UngateNotGated
			return nil
		}
		next := cur.DeepCopy()
		return u.w.Write(ctx, cur, next, u.m.ReleaseGated(ctx, next, false))
	})
	if err != nil {
		res.Result = "error: " + clean(err.Error(), 4*maxShown)
	}
	return res
}

// syncRecorder records each Event at once with a create (client-go's
// broadcaster sends them in the background, and a command exits first);
// an Event it cannot record is reported on warn.
type syncRecorder struct {
	cs   kubernetes.Interface
	warn io.Writer
}

var _ events.EventRecorder = syncRecorder{}

func (r syncRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	pod, ok := regarding.(*corev1.Pod)
	if !ok {
		return
	}
	now := metav1.NowMicro()
	ev := &eventsv1.Event{
		// Named as client-go's recorder names events.
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		EventTime:           now,
		ReportingController: "isamatch.io/kubectl-isa",
		ReportingInstance:   userAgent,
		Action:              action,
		Reason:              reason,
		Type:                eventtype,
		Note:                sanitize.Line(fmt.Sprintf(note, args...), 1024),
		Regarding:           corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if _, err := r.cs.EventsV1().Events(pod.Namespace).Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		fmt.Fprintf(r.warn, "warning: event %s on pod %s/%s not recorded: %v\n", reason, pod.Namespace, pod.Name, err)
	}
}

func writeUngate(w io.Writer, rs []UngateResult, allNamespaces bool) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "No gated pods found.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := "NAME\tRESULT"
	if allNamespaces {
		head = "NAMESPACE\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, r := range rs {
		if allNamespaces {
			fmt.Fprintf(tw, "%s\t", r.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Pod, r.Result)
	}
	return tw.Flush()
}

func newUngateCommand(o *Options) *cobra.Command {
	var (
		out           outputFlag
		all           bool
		allNamespaces bool
		selector      string
		enforcement   string
		nsModes       []string
	)
	cmd := &cobra.Command{
		Use:   "ungate (NAME... | --all | -l SELECTOR)",
		Short: "Release pods held by isamatch's scheduling gate without the webhook",
		Long: `Release pods that carry the scheduling gate isa.isamatch.io/resolve when the
webhook's gate controller cannot (it is down, or isamatch is being removed).
Each pod is released exactly as the gate controller releases a pod past its
bound, with isamatch's code: its images are not looked up, so they are left
out of its node affinity and its decision lists them as unresolved (gate
"timeout"); its own ISA request still counts, decided against the nodes
now. An Event IsamatchGateTimeout on the pod says so. A pod isamatch would
deny is released as the webhook's enforcement says (--enforcement, and a
namespace's isa.isamatch.io/enforcement label among --namespace-enforcement):
with deny, onto no node; with warn, without isamatch's affinity.`,
		Example: `  kubectl isa ungate app-7d9c -n shop
  kubectl isa ungate --all -n shop
  kubectl isa ungate -A -l app=web -o name`,
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return o.completePods(cmd.Context()), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all && !allNamespaces && selector == "" {
				return fmt.Errorf("%w: ungate takes pod names, --all, -A or -l", ErrUsage)
			}
			if len(args) > 0 && (all || allNamespaces || selector != "") {
				return fmt.Errorf("%w: ungate takes pod names or --all/-A/-l, not both", ErrUsage)
			}
			if enforcement != mutate.EnforcementDeny && enforcement != mutate.EnforcementWarn {
				return fmt.Errorf("%w: --enforcement %q: want deny or warn", ErrUsage, enforcement)
			}
			modes, err := mutate.ParseNamespaceModes(nsModes)
			if err != nil {
				return fmt.Errorf("%w: --namespace-enforcement: %w", ErrUsage, err)
			}
			ctx := cmd.Context()
			cfg, err := o.restConfig()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("new clientset: %w", err)
			}
			ns := ""
			if !allNamespaces {
				if ns, err = o.namespace(); err != nil {
					return err
				}
			}
			pods, err := podsToUngate(ctx, cs, ns, args, selector)
			if err != nil {
				return err
			}
			u, err := NewUngater(ctx, cs, o.Streams.ErrOut, UngateOptions{Keys: o.keys(), Enforcement: enforcement, NamespaceModes: modes})
			if err != nil {
				return err
			}
			rs := []UngateResult{}
			names := []string{}
			failed := 0
			for k := range pods {
				r := u.Ungate(ctx, &pods[k])
				if len(args) == 0 && r.Result == UngateNotGated {
					continue
				}
				if r.Result != UngateReleased && r.Result != UngateNotGated {
					failed++
				}
				rs = append(rs, r)
				names = append(names, "pod/"+r.Pod)
			}
			if err := out.print(o.Streams.Out, rs, names, func(w io.Writer, _ bool) error { return writeUngate(w, rs, allNamespaces) }); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d pod(s) not released", failed)
			}
			return nil
		},
	}
	out.add(cmd, outputJSON, outputYAML, outputName)
	cmd.Flags().BoolVar(&all, "all", false, "Release every gated pod of the namespace")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Release the gated pods of every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter pods on, as kubectl's")
	cmd.Flags().StringVar(&enforcement, "enforcement", mutate.EnforcementDeny, "The webhook's --enforcement: what a pod isamatch would deny is released with (deny: onto no node; warn: without isamatch's affinity)")
	cmd.Flags().StringSliceVar(&nsModes, "namespace-enforcement", []string{mutate.EnforcementDeny, mutate.EnforcementWarn}, "The webhook's --namespace-enforcement: the modes a namespace's isa.isamatch.io/enforcement label may choose (none: the label is ignored)")
	return cmd
}

// podsToUngate reads the pods named, or those selector selects in ns ("":
// every namespace).
func podsToUngate(ctx context.Context, cs kubernetes.Interface, ns string, names []string, selector string) ([]corev1.Pod, error) {
	if len(names) == 0 {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		return list.Items, nil
	}
	out := make([]corev1.Pod, 0, len(names))
	for _, ref := range names {
		name, err := podName(ref)
		if err != nil {
			return nil, err
		}
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
		}
		out = append(out, *p)
	}
	return out, nil
}

// namespaceLabel returns mutate.Options.NamespaceEnforcement read from the
// API server, once per namespace; a namespace it cannot read is reported
// on warn and keeps the cluster's mode.
func namespaceLabel(cs kubernetes.Interface, warn io.Writer) func(context.Context, string) string {
	seen := map[string]string{}
	return func(ctx context.Context, ns string) string {
		if v, ok := seen[ns]; ok {
			return v
		}
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			fmt.Fprintf(warn, "warning: namespace %s: %s; its pods get --enforcement\n", ns, clean(err.Error(), 2*maxShown))
			seen[ns] = ""
			return ""
		}
		seen[ns] = n.Labels[isa.EnforcementLabel]
		return seen[ns]
	}
}
