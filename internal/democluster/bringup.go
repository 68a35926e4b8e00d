package democluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// StartControlPlane starts kube-apiserver, etcd and kube-scheduler with
// their files in dir/controlplane, and hook installed through envtest's
// WebhookInstallOptions: envtest picks the loopback port and writes the
// serving certificates the webhook process then uses (see StartWebhook).
func StartControlPlane(ctx context.Context, dir string, hook *admissionregistrationv1.MutatingWebhookConfiguration) (*testbed.ControlPlane, error) {
	return StartControlPlaneWithFlags(ctx, dir, hook, Flags{})
}

// Flags are extra control-plane flags: feature gates and API versions a
// suite turns on (the Workload API's, say).
type Flags struct {
	// APIServer are kube-apiserver flags, name without "--".
	APIServer map[string][]string
	// Scheduler are kube-scheduler arguments ("--feature-gates=...").
	Scheduler []string
}

// StartControlPlaneWithFlags is StartControlPlane with extra flags.
func StartControlPlaneWithFlags(ctx context.Context, dir string, hook *admissionregistrationv1.MutatingWebhookConfiguration, flags Flags) (*testbed.ControlPlane, error) {
	cpDir := filepath.Join(dir, "controlplane")
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return nil, fmt.Errorf("create control plane dir: %w", err)
	}
	return testbed.Start(ctx, testbed.Options{
		Scheduler:      true,
		Dir:            cpDir,
		APIServerFlags: flags.APIServer,
		SchedulerFlags: flags.Scheduler,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			LocalServingHost: "127.0.0.1",
			MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{hook},
		},
	})
}

// StartRegistry starts Debian's docker-registry (TLS, basic auth) with its
// storage in dir/registry.
func StartRegistry(ctx context.Context, dir string) (*testbed.Registry, error) {
	regDir := filepath.Join(dir, "registry")
	if err := os.MkdirAll(regDir, 0o755); err != nil {
		return nil, fmt.Errorf("create registry dir: %w", err)
	}
	return testbed.StartRegistry(ctx, testbed.RegistryOptions{Dir: regDir})
}

// WebhookNamespace is the namespace of the webhook StartWebhook starts: its
// leader-election Lease.
const WebhookNamespace = "isamatch-system"

// WebhookOptions configures StartWebhook.
type WebhookOptions struct {
	// Bin is the webhook binary.
	Bin string
	// CP is the control plane from StartControlPlane: the webhook serves on
	// its envtest webhook port with its envtest certificates.
	CP *testbed.ControlPlane
	// RegistryCA is the CA file the webhook trusts for the registry.
	RegistryCA string
	// Log is the file the webhook's output goes to; its configuration
	// file is written beside it.
	Log string
	// Kubeconfig, when set, is the kubeconfig the webhook uses instead of
	// CP's admin one (a ServiceAccount's, to run with its RBAC).
	Kubeconfig string
	// Verbose runs the webhook at -v=1.
	Verbose bool
	// Configure, when set, changes the webhook's configuration after the
	// settings common to every harness (see StartWebhook): the fields a
	// spec or tool needs, say Admission.Resolve or Gate.Timeout.
	Configure func(*v1alpha1.WebhookConfiguration)
	// ConfigDir, when set, is the webhook's --config-dir: drop-ins it
	// reads over the file StartWebhook writes (a bench run's own
	// configuration).
	ConfigDir string
	// Env, when set, is added to the webhook's environment (NAME=VALUE):
	// the shipped Deployment's (testbed.ShippedWebhookEnv) to run it as
	// the cluster would.
	Env []string
}

// Webhook is a webhook process started by StartWebhook.
type Webhook struct {
	// Process is the running binary.
	Process *testbed.Process
	// HealthAddr and MetricsAddr are its healthz/readyz and (plain HTTP)
	// metrics addresses, on free loopback ports.
	HealthAddr, MetricsAddr string
}

// StartWebhook starts the webhook binary against o.CP and waits up to 60s
// until its /readyz answers 200. When the process started but never became
// ready, the returned Webhook still holds it so the caller can stop it and
// read its log.
func StartWebhook(ctx context.Context, o WebhookOptions) (Webhook, error) {
	var w Webhook
	wio := o.CP.Env.WebhookInstallOptions
	// The webhook's own namespace holds its leader-election Lease: without
	// it no replica leads, and the gate controller and the pod Events
	// never run. Ignored by the webhook, as the installed one is.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: WebhookNamespace, Labels: map[string]string{isa.IgnoreLabel: "true"}}}
	if err := o.CP.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return w, fmt.Errorf("create the webhook's namespace %s: %w", WebhookNamespace, err)
	}
	kubeconfig := o.CP.KubeconfigPath
	if o.Kubeconfig != "" {
		kubeconfig = o.Kubeconfig
	}
	err := testbed.StartOnFreePorts(2, func(ports []int) error {
		w.HealthAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
		w.MetricsAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
		config, err := configfile.Webhook(filepath.Dir(o.Log), func(c *v1alpha1.WebhookConfiguration) {
			c.Namespace = WebhookNamespace
			no := false
			c.Server.CertDir, c.Server.Port, c.Server.CertRotation = wio.LocalServingCertDir, wio.LocalServingPort, &no
			c.Registry.CAFile = o.RegistryCA
			c.Health.BindAddress, c.Metrics.BindAddress = w.HealthAddr, w.MetricsAddr
			// The demo, the benchmarks and the suites scrape over plain HTTP.
			c.Metrics.Secure = false
			// Admission answers with the affinity, as the suites check;
			// Configure may choose auto or gate.
			c.Admission.Resolve = mutate.ResolveSync
			// Their images are private: pulled with the namespace's secret.
			c.Registry.PullSecrets = true
		}, o.Configure)
		if err != nil {
			return err
		}
		args := []string{"--kubeconfig=" + kubeconfig, "--config=" + config}
		if o.ConfigDir != "" {
			args = append(args, "--config-dir="+o.ConfigDir)
		}
		if o.Verbose {
			args = append(args, "-v=1")
		}
		p, err := testbed.StartProcess("webhook", o.Bin, args, o.Env, o.Log)
		if err != nil {
			return err
		}
		w.Process = p
		err = p.WaitHTTP(ctx, "http://"+w.HealthAddr+"/readyz", nil, 60*time.Second,
			func(status int) bool { return status == 200 })
		if testbed.PortTaken(err) {
			// Another attempt follows (or the caller stops w.Process).
			_ = p.Stop(10 * time.Second) // err carries its log tail
		}
		return err
	})
	return w, err
}

// SetUpNamespace creates namespace ns with labels unless it exists, the
// kubernetes.io/dockerconfigjson Secret secretName holding dockerConfigJSON
// in it, and a default ServiceAccount that references the secret (no
// controller-manager runs, so nothing else creates that account); an
// existing default ServiceAccount gets the reference instead.
func SetUpNamespace(ctx context.Context, c client.Client, ns string, labels map[string]string, secretName string, dockerConfigJSON []byte) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON},
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create pull secret in %s: %w", ns, err)
	}
	sa := &corev1.ServiceAccount{
		ObjectMeta:       metav1.ObjectMeta{Name: "default", Namespace: ns},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: secretName}},
	}
	if err := c.Create(ctx, sa); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create default ServiceAccount in %s: %w", ns, err)
		}
		var cur corev1.ServiceAccount
		if err := c.Get(ctx, client.ObjectKeyFromObject(sa), &cur); err != nil {
			return fmt.Errorf("get default ServiceAccount in %s: %w", ns, err)
		}
		cur.ImagePullSecrets = sa.ImagePullSecrets
		if err := c.Update(ctx, &cur); err != nil {
			return fmt.Errorf("update default ServiceAccount in %s: %w", ns, err)
		}
	}
	return nil
}

// WaitDecisionCount calls admit every interval, up to timeout, until the
// pod annotations it returns (from a dry-run pod admission) say, in the
// stored decision (contract.ParseDecision), that the webhook's inventory
// matched want nodes: the webhook serves and has seen every node. It
// returns the last decision annotation, or a note saying there was none,
// for the caller's error message.
func WaitDecisionCount(ctx context.Context, interval, timeout time.Duration, want int, admit func(context.Context) (map[string]string, error)) (last string, err error) {
	err = wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ann, err := admit(ctx)
		if err != nil {
			return false, err
		}
		last = ann[isa.DecisionAnnotation]
		c, err := contract.ParseDecision(ann)
		if errors.Is(err, contract.ErrNoDecision) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("decode the decision %q: %w", last, err)
		}
		return c.RequiredNodes == want, nil
	})
	if err != nil && last == "" {
		last = "(no decision annotation: the webhook did not mutate the pod)"
	}
	return last, err
}
