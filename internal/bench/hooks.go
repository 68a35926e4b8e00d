package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Hook is the webhook a namespace's pods go through.
type Hook string

// Hooks.
const (
	// NoHook: the namespace carries isa.IgnoreLabel, which the shipped
	// configuration's namespaceSelector excludes, and no HookLabel.
	NoHook Hook = "none"
	// Isamatch: the webhook under test, behind the shipped configuration.
	Isamatch Hook = "isamatch"
	// Noop: the floor, internal/bench/noopwebhook behind a copy of the
	// shipped configuration (HookConfiguration).
	Noop Hook = "noop"
	// GatePath: a second isamatch webhook process started with
	// admission.resolve: gate (every pod with an image is gated at admission and
	// released by its gate controller), behind a copy of the shipped
	// configuration.
	GatePath Hook = "gate"
	// Replay: the no-op webhook's replay path, which answers each pod with
	// the patch isamatch's webhook answered its request with, behind a
	// copy of the shipped configuration.
	Replay Hook = "replay"
	// Annotate: the no-op webhook's annotate path, which answers each pod
	// with a patch adding one annotation, behind a copy of the shipped
	// configuration.
	Annotate Hook = "annotate"
)

// HookLabel on a namespace sends its pods to the bench's extra webhook
// named by its value (Noop, GatePath, Replay, Annotate) instead of
// isamatch's; such a namespace also carries isa.IgnoreLabel, so isamatch's
// webhook never sees them.
const HookLabel = "bench.isamatch.io/webhook"

// hookOf is Isamatch or NoHook.
func hookOf(with bool) Hook {
	if with {
		return Isamatch
	}
	return NoHook
}

// namespaceLabels are the labels of a namespace whose pods go through h.
func namespaceLabels(h Hook) map[string]string {
	switch h {
	case Isamatch:
		return nil
	case NoHook:
		return map[string]string{isa.IgnoreLabel: "true"}
	default:
		return map[string]string{isa.IgnoreLabel: "true", HookLabel: string(h)}
	}
}

// HookConfiguration is shipped (as testbed.ShippedWebhookConfiguration
// reads it) turned into the configuration of another webhook: its rules,
// failure policy, timeout, match and reinvocation policies and side
// effects kept, its name and webhook name prefixed with h, the client
// calling url with caBundle, and the namespaceSelector's isa.IgnoreLabel
// expression replaced by HookLabel=h, so that it and isamatch's never see
// the same pod.
func HookConfiguration(shipped *admissionregistrationv1.MutatingWebhookConfiguration, h Hook, url string, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	cfg := shipped.DeepCopy()
	cfg.Name = "bench-" + string(h)
	cfg.ResourceVersion, cfg.UID = "", ""
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		w.Name = string(h) + "." + w.Name
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
		sel := w.NamespaceSelector
		if sel == nil {
			sel = &metav1.LabelSelector{}
			w.NamespaceSelector = sel
		}
		var kept []metav1.LabelSelectorRequirement
		for _, r := range sel.MatchExpressions {
			if r.Key != isa.IgnoreLabel {
				kept = append(kept, r)
			}
		}
		sel.MatchExpressions = append(kept, metav1.LabelSelectorRequirement{
			Key: HookLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{string(h)},
		})
	}
	return cfg
}

// NoopWebhook is a running internal/bench/noopwebhook.
type NoopWebhook struct {
	Process *testbed.Process
	// Port is its HTTPS port on 127.0.0.1.
	Port int
	// HealthAddr and MetricsAddr are its plain-HTTP addresses.
	HealthAddr, MetricsAddr string
}

// URL is where the API server calls it.
func (n *NoopWebhook) URL(path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(n.Port) + path
}

// StartNoopWebhook starts the no-op webhook binary bin on free loopback
// ports, serving the certificate in certDir (tls.crt, tls.key), and waits
// until it is ready. It serves AnnotatePath too; when replayPatches names
// a file, it also serves ReplayPath with that file's patches.
func StartNoopWebhook(ctx context.Context, bin, kubeconfig, certDir, logPath, replayPatches string) (*NoopWebhook, error) {
	n := &NoopWebhook{}
	err := testbed.StartOnFreePorts(3, func(ports []int) error {
		n.Port = ports[0]
		n.HealthAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
		n.MetricsAddr = "127.0.0.1:" + strconv.Itoa(ports[2])
		args := []string{
			"--kubeconfig=" + kubeconfig,
			"--cert-dir=" + certDir,
			"--port=" + strconv.Itoa(n.Port),
			"--health-probe-bind-address=" + n.HealthAddr,
			"--metrics-bind-address=" + n.MetricsAddr,
		}
		if replayPatches != "" {
			args = append(args, "--replay-patches="+replayPatches)
		}
		p, err := testbed.StartProcess("noopwebhook", bin, args, nil, logPath)
		if err != nil {
			return err
		}
		n.Process = p
		err = p.WaitHTTP(ctx, "http://"+n.HealthAddr+"/readyz", nil, 60*time.Second, func(status int) bool { return status == 200 })
		if err != nil {
			_ = p.Stop(10 * time.Second) // err carries its log tail
			n.Process = nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("start the no-op webhook: %w", err)
	}
	return n, nil
}
