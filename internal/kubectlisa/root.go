package kubectlisa

import (
	"context"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/internal/isacli"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// ErrUsage marks errors in the command line (exit status 2).
var ErrUsage = errors.New("usage error")

// userAgent names the plugin to the API server.
const userAgent = "kubectl-isa"

// Options are what every cluster command shares: the kubeconfig flags
// kubectl has (--kubeconfig, --context, -n, --as, ...) and the streams.
type Options struct {
	Flags   *genericclioptions.ConfigFlags
	Streams genericiooptions.IOStreams
	// BareKeys is the webhook's --bare-keys: whether the paper's bare pod
	// keys (isa.request, isa.qemu, ARCH, QEMU) are read as requests.
	BareKeys bool
}

// keys are the pod keys requests are read from, as the webhook reads them.
func (o *Options) keys() engine.KeyOptions { return engine.KeyOptions{IgnoreBareKeys: !o.BareKeys} }

// restConfig is the client configuration the flags select.
func (o *Options) restConfig() (*rest.Config, error) {
	cfg, err := o.Flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	return cfg, nil
}

// clientset builds a clientset from the flags.
func (o *Options) clientset() (kubernetes.Interface, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("new clientset: %w", err)
	}
	return cs, nil
}

// namespace is -n, else the kubeconfig context's namespace.
func (o *Options) namespace() (string, error) {
	ns, _, err := o.Flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("kubeconfig namespace: %w", err)
	}
	return ns, nil
}

// NewCommand returns the kubectl-isa command tree writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{Flags: genericclioptions.NewConfigFlags(true), Streams: streams}
	root := &cobra.Command{
		Use:   "kubectl-isa",
		Short: "Show what isamatch sees and decides: node ISAs, where a request could run, why a pod is where it is, misplaced pods",
		Long: `kubectl isa shows what isamatch sees and decides in a cluster.

The cluster commands take kubectl's flags (--kubeconfig, --context, -n,
--as, ...) and -o json|yaml|wide|name. normalize and match work offline.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl isa"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return fmt.Errorf("%w: %w", ErrUsage, err) })
	o.Flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().BoolVar(&o.BareKeys, "bare-keys", true, "read the paper's bare pod keys isa.request, isa.qemu, ARCH and QEMU as requests, as the webhook does by default; false for a webhook run with --bare-keys=false")
	root.AddCommand(
		newNodesCommand(o), newCheckCommand(o), newExplainCommand(o), newAuditCommand(o), newUngateCommand(o),
		newOfflineCommand("normalize", "normalize [--json] [--from=user|cpuinfo|gcc|elf] ISA", "Print the canonical and short forms of an ISA string (offline)", `  kubectl isa normalize rv64gcv_zba
  kubectl isa normalize --from=cpuinfo rv64imafdcvh_zicsr`, isacli.Normalize, streams),
		newOfflineCommand("match", "match REQUEST NODE_ISA", "Tell whether a node ISA satisfies a request; exit status 1 when it does not (offline)", `  kubectl isa match rv64gc rv64gcv
  kubectl isa match "x86-64-v3 | rv64gcv" x86-64-v2`, func(args []string, out io.Writer) error {
			ok, err := isacli.Match(args, out)
			if err == nil && !ok {
				return errNoMatch
			}
			return err
		}, streams),
		newVersionCommand(streams),
	)
	return root
}

// errNoMatch is match's "no" (exit status 1, nothing more printed).
var errNoMatch = errors.New("no match")

// IsNoMatch reports whether err is match's "no".
func IsNoMatch(err error) bool { return errors.Is(err, errNoMatch) }

// newOfflineCommand wraps an isacli command, which parses its own flags.
func newOfflineCommand(name, use, short, example string, run func([]string, io.Writer) error, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		Example:            example,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			err := run(args, streams.Out)
			if errors.Is(err, isacli.ErrUsage) {
				return fmt.Errorf("%w: %w", ErrUsage, err)
			}
			return err
		},
	}
}

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the plugin's version, VCS revision and Go version",
		Example: "  kubectl isa version\n  kubectl isa version -o json",
		Args:    cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			info := buildinfo.Read()
			v := struct {
				Version   string `json:"version"`
				Revision  string `json:"revision"`
				GoVersion string `json:"goVersion"`
			}{info.Version, info.Revision, info.GoVersion}
			return out.print(streams.Out, v, nil, func(w io.Writer, _ bool) error {
				_, err := fmt.Fprintln(w, "kubectl-isa", info)
				return err
			})
		},
	}
	out.add(cmd, "json", "yaml")
	return cmd
}

// maxCompletions bounds the names a completion lists.
const maxCompletions = 500

// completePods lists the names of the pods in the namespace the flags
// select, for shell completion; nothing when the cluster cannot be read.
func (o *Options) completePods(ctx context.Context) []cobra.Completion {
	cs, err := o.clientset()
	if err != nil {
		return nil
	}
	ns, err := o.namespace()
	if err != nil {
		return nil
	}
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: maxCompletions})
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(list.Items))
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}
