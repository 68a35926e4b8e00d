package kubectlisa

import (
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Options is one kubectl-isa invocation: the kubeconfig flags, the output
// format and the command with its arguments.
type Options struct {
	Kubeconfig string
	Context    string
	// Namespace is -n; empty means the kubeconfig context's namespace.
	Namespace string
	// Output is "" (a table for people) or "json".
	Output  string
	Command string
	Args    []string
}

// ErrUsage marks errors in the command line (exit status 2).
var ErrUsage = errors.New("usage error")

// Validate checks the output format and the number of arguments.
func (o Options) Validate() error {
	if o.Output != "" && o.Output != "json" {
		return fmt.Errorf("%w: -o %q: want json or nothing (a table)", ErrUsage, o.Output)
	}
	want := map[string]int{"nodes": 0, "check": 1, "explain": 1}
	n, ok := want[o.Command]
	switch {
	case o.Command == "":
		return fmt.Errorf("%w: no command", ErrUsage)
	case !ok:
		return fmt.Errorf("%w: unknown command %q", ErrUsage, o.Command)
	case len(o.Args) != n:
		return fmt.Errorf("%w: %s takes %d argument(s), got %d", ErrUsage, o.Command, n, len(o.Args))
	}
	return nil
}

// NewClient builds a clientset from the kubeconfig flags as kubectl does
// ($KUBECONFIG, ~/.kube/config, in-cluster) and returns the namespace to
// use: o.Namespace, else the context's.
func NewClient(o Options) (kubernetes.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.UserAgent = "kubectl-isa"
	ns := o.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("kubeconfig namespace: %w", err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("new clientset: %w", err)
	}
	return cs, ns, nil
}
