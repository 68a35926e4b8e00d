package democluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/test/framework"
)

// StartControlPlane starts kube-apiserver, etcd and kube-scheduler with
// their files in dir/controlplane, and hook installed through envtest's
// WebhookInstallOptions: envtest picks the loopback port and writes the
// serving certificates the webhook process then uses (see StartWebhook).
func StartControlPlane(ctx context.Context, dir string, hook *admissionregistrationv1.MutatingWebhookConfiguration) (*framework.ControlPlane, error) {
	cpDir := filepath.Join(dir, "controlplane")
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return nil, fmt.Errorf("create control plane dir: %w", err)
	}
	return framework.Start(ctx, framework.Options{
		Scheduler: true,
		Dir:       cpDir,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			LocalServingHost: "127.0.0.1",
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hook},
		},
	})
}

// StartRegistry starts Debian's docker-registry (TLS, basic auth) with its
// storage in dir/registry.
func StartRegistry(ctx context.Context, dir string) (*framework.Registry, error) {
	regDir := filepath.Join(dir, "registry")
	if err := os.MkdirAll(regDir, 0o755); err != nil {
		return nil, fmt.Errorf("create registry dir: %w", err)
	}
	return framework.StartRegistry(ctx, framework.RegistryOptions{Dir: regDir})
}

// WebhookOptions configures StartWebhook.
type WebhookOptions struct {
	// Bin is the webhook binary.
	Bin string
	// CP is the control plane from StartControlPlane: the webhook serves on
	// its envtest webhook port with its envtest certificates.
	CP *framework.ControlPlane
	// RegistryCA is the CA file the webhook trusts for the registry.
	RegistryCA string
	// Log is the file the webhook's output goes to.
	Log string
	// ExtraArgs are passed after the common flags.
	ExtraArgs []string
}

// Webhook is a webhook process started by StartWebhook.
type Webhook struct {
	// Process is the running binary.
	Process *framework.Process
	// HealthAddr and MetricsAddr are its healthz/readyz and metrics
	// addresses, on free loopback ports.
	HealthAddr, MetricsAddr string
}

// StartWebhook starts the webhook binary against o.CP and waits up to 60s
// until its /readyz answers 200. When the process started but never became
// ready, the returned Webhook still holds it so the caller can stop it and
// read its log.
func StartWebhook(ctx context.Context, o WebhookOptions) (Webhook, error) {
	var w Webhook
	healthPort, err := framework.FreePort()
	if err != nil {
		return w, err
	}
	metricsPort, err := framework.FreePort()
	if err != nil {
		return w, err
	}
	w.HealthAddr = "127.0.0.1:" + strconv.Itoa(healthPort)
	w.MetricsAddr = "127.0.0.1:" + strconv.Itoa(metricsPort)
	wio := o.CP.Env.WebhookInstallOptions
	args := append([]string{
		"--kubeconfig=" + o.CP.KubeconfigPath,
		"--cert-dir=" + wio.LocalServingCertDir,
		"--port=" + strconv.Itoa(wio.LocalServingPort),
		"--cert-rotation=false",
		"--registry-ca=" + o.RegistryCA,
		"--health-probe-bind-address=" + w.HealthAddr,
		"--metrics-bind-address=" + w.MetricsAddr,
	}, o.ExtraArgs...)
	if w.Process, err = framework.StartProcess("webhook", o.Bin, args, nil, o.Log); err != nil {
		return w, err
	}
	return w, w.Process.WaitHTTP(ctx, "http://"+w.HealthAddr+"/readyz", nil, 60*time.Second,
		func(status int) bool { return status == 200 })
}
