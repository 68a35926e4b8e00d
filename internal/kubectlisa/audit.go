package kubectlisa

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Names of the shipped install (config/webhook) audit reads its scope from.
const (
	webhookConfigName = "isamatch"
	webhookNamespace  = "isamatch-system"
)

// AuditOptions selects the pods to audit.
type AuditOptions struct {
	// Namespace is the namespace audited; "" audits every namespace.
	Namespace string
	// Selector is a label selector of the pods ("" for all).
	Selector string
	// WebhookConfig and WebhookNamespace name the webhook's
	// MutatingWebhookConfiguration and namespace: its selectors and the
	// namespaces it skips say which pods it should have decided.
	WebhookConfig, WebhookNamespace string
	// Keys are the pod keys the webhook reads requests from.
	Keys engine.KeyOptions
}

// AuditResult is what Audit found, and how it judged which pods the
// webhook should have decided.
type AuditResult struct {
	Findings []audit.Finding `json:"findings"`
	// Scope says where the webhook's selectors came from, or why they
	// could not be read.
	Scope string `json:"scope"`
}

// Audit lists the running pods of o whose node cannot run what they need,
// and those the webhook should have decided but did not (package audit).
func Audit(ctx context.Context, cs kubernetes.Interface, o AuditOptions) (AuditResult, error) {
	pods, err := cs.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return AuditResult{}, fmt.Errorf("list pods: %w", err)
	}
	nodes, err := listNodes(ctx, cs, "")
	if err != nil {
		return AuditResult{}, err
	}
	metas := make(map[string]*metav1.ObjectMeta, len(nodes))
	labels := make(map[string]map[string]string, len(nodes))
	for k := range nodes {
		metas[nodes[k].Name] = &nodes[k].ObjectMeta
		labels[nodes[k].Name] = nodes[k].Labels
	}
	scope, how := auditScope(ctx, cs, o)
	in := audit.Input{Nodes: metas, Inventory: inventory.NewStatic(labels).Snapshot(), Scope: scope, Keys: o.Keys}
	in.Pods = func(yield func(*corev1.Pod) bool) {
		for k := range pods.Items {
			if !yield(&pods.Items[k]) {
				return
			}
		}
	}
	fs := audit.Audit(in)
	if fs == nil {
		fs = []audit.Finding{}
	}
	return AuditResult{Findings: fs, Scope: how}, nil
}

// auditScope reads the webhook's configuration and the namespaces'
// labels; what it cannot read it does without, and says so.
func auditScope(ctx context.Context, cs kubernetes.Interface, o AuditOptions) (audit.Scope, string) {
	skip := append([]string{o.WebhookNamespace}, audit.DefaultSkipNamespaces...)
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, o.WebhookConfig, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return audit.Scope{SkipNamespaces: skip}, "no MutatingWebhookConfiguration " + o.WebhookConfig + ": every namespace but " + strings.Join(skip, ", ")
		}
		return audit.Scope{SkipNamespaces: skip}, "the webhook's selectors could not be read (" + clean(err.Error(), 2*maxShown) + "): every namespace but " + strings.Join(skip, ", ")
	}
	scope, err := audit.ScopeFrom(mwc, "", skip)
	if err != nil {
		return audit.Scope{SkipNamespaces: skip}, clean(err.Error(), 2*maxShown)
	}
	how := "the selectors of MutatingWebhookConfiguration " + o.WebhookConfig
	if !hasNamespaceSelector(mwc) {
		return scope, how
	}
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return scope, how + ", namespaces judged by name only (" + clean(err.Error(), 2*maxShown) + ")"
	}
	byName := make(map[string]map[string]string, len(nss.Items))
	for _, ns := range nss.Items {
		byName[ns.Name] = ns.Labels
	}
	scope.NamespaceLabels = func(ns string) (map[string]string, bool) { l, ok := byName[ns]; return l, ok }
	return scope, how
}

func hasNamespaceSelector(mwc *admissionregistrationv1.MutatingWebhookConfiguration) bool {
	for _, w := range mwc.Webhooks {
		if w.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

func writeAudit(w io.Writer, res AuditResult, allNamespaces, wide bool) error {
	if len(res.Findings) == 0 {
		_, err := fmt.Fprintln(w, "No misplaced pods found.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := "NAME\tNODE\tREASONS"
	if allNamespaces {
		head = "NAMESPACE\t" + head
	}
	if wide {
		head += "\tNODE ISA\tDETAILS"
	}
	fmt.Fprintln(tw, head)
	for _, f := range res.Findings {
		if allNamespaces {
			fmt.Fprintf(tw, "%s\t", f.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s", f.Pod, f.Node, strings.Join(f.Reasons, ","))
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s", f.NodeISA, strings.Join(f.Details, "; "))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newAuditCommand(o *Options) *cobra.Command {
	var (
		out           outputFlag
		allNamespaces bool
		selector      string
		ao            = AuditOptions{WebhookConfig: webhookConfigName, WebhookNamespace: webhookNamespace}
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "List running pods whose node cannot run what they need, and pods isamatch did not decide",
		Long: `List the running pods isamatch would not have placed where they are:

  undecided  the webhook handles the pod's namespace but the pod has no
             decision (admitted while the webhook failed open, or before
             isamatch was installed): create it again
  request    its node cannot run the pod's own ISA request
  affinity   its node no longer satisfies the pod's required node affinity
             (the node's labels changed after it was scheduled)
  runtime    a container died of SIGILL or "exec format error"

Which pods the webhook handles is read from its MutatingWebhookConfiguration
(namespace and object selectors) and the namespaces' labels.`,
		Example: `  kubectl isa audit -A
  kubectl isa audit -n shop -o wide
  kubectl isa audit -A -l app=web -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := o.clientset()
			if err != nil {
				return err
			}
			ao.Selector, ao.Keys = selector, o.keys()
			if !allNamespaces {
				if ao.Namespace, err = o.namespace(); err != nil {
					return err
				}
			}
			res, err := Audit(cmd.Context(), cs, ao)
			if err != nil {
				return err
			}
			names := make([]string, len(res.Findings))
			for k, f := range res.Findings {
				names[k] = "pod/" + f.Pod
			}
			return out.print(o.Streams.Out, res, names, func(w io.Writer, wide bool) error { return writeAudit(w, res, allNamespaces, wide) })
		},
	}
	out.add(cmd, outputJSON, outputYAML, outputWide, outputName)
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Audit the pods of every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter pods on, as kubectl's")
	cmd.Flags().StringVar(&ao.WebhookConfig, "webhook-configuration", ao.WebhookConfig, "The webhook's MutatingWebhookConfiguration, whose selectors say which pods it decides")
	cmd.Flags().StringVar(&ao.WebhookNamespace, "webhook-namespace", ao.WebhookNamespace, "The webhook's namespace, which it skips")
	return cmd
}
