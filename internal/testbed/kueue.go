package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// KueueAssetsEnv names the directory hack/kueue.sh prints: the kueue binary,
// crd/*.yaml and webhook/manifests.yaml of one Kueue version.
const KueueAssetsEnv = "ISAMATCH_KUEUE_ASSETS"

// ErrKueueAssetsMissing is returned by KueueAssetsDir when KueueAssetsEnv is
// unset: the suites that need Kueue skip then, except in CI.
var ErrKueueAssetsMissing = errors.New(KueueAssetsEnv + " is not set: run `make test`, or export " +
	KueueAssetsEnv + "=\"$(hack/kueue.sh)\" before go test")

// KueueNamespace is the namespace Kueue runs "in" (its configuration's
// namespace); the pod webhooks skip it, as in Kueue's own kustomization.
const KueueNamespace = "kueue-system"

// KueueAssetsDir returns the KueueAssetsEnv directory after checking that
// it holds what StartKueue reads.
func KueueAssetsDir() (string, error) {
	dir := os.Getenv(KueueAssetsEnv)
	if dir == "" {
		return "", ErrKueueAssetsMissing
	}
	for _, p := range []string{"kueue", "webhook/manifests.yaml", "crd"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return "", fmt.Errorf("%s=%s has no %s: rerun hack/kueue.sh", KueueAssetsEnv, dir, p)
		}
	}
	return dir, nil
}

// KueueOptions configures StartKueue.
type KueueOptions struct {
	// Assets is the KueueAssetsDir directory.
	Assets string
	// Frameworks are Kueue's integrations.frameworks; empty means "pod"
	// (plain pods and pod groups, which need no kube-controller-manager).
	Frameworks []string
	// FeatureGates are set in Kueue's configuration over its defaults and
	// over VisibilityOnDemand=false (its API server would listen on every
	// interface's port 8082).
	FeatureGates map[string]bool
}

// Kueue is a running Kueue controller manager.
type Kueue struct {
	// Process is the kueue binary.
	Process *Process
	// HealthAddr serves /healthz and /readyz.
	HealthAddr string
}

// StartKueue installs Kueue's CRDs into cp, starts its controller manager
// against cp with its webhook on a free loopback port (serving envtest's
// certificates for 127.0.0.1, so cp must have been started with envtest
// WebhookInstallOptions), waits until it is ready, and only then installs its
// webhook configurations as URL webhooks on that port: Kueue's own
// certificate management stays off. ctx bounds the start-up.
func StartKueue(ctx context.Context, cp *ControlPlane, o KueueOptions) (*Kueue, error) {
	wio := cp.Env.WebhookInstallOptions
	if wio.LocalServingCertDir == "" || len(wio.LocalServingCAData) == 0 {
		return nil, errors.New("start kueue: the control plane has no envtest webhook certificates: start it with WebhookInstallOptions")
	}
	if len(o.Frameworks) == 0 {
		o.Frameworks = []string{"pod"}
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(o.Assets, "crd")}, ErrorIfPathMissing: true,
	}); err != nil {
		return nil, fmt.Errorf("install kueue crds from %s: %w", o.Assets, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", KueueNamespace, err)
	}

	k := &Kueue{}
	var webhookPort int
	err := StartOnFreePorts(2, func(ports []int) error {
		webhookPort = ports[0]
		k.HealthAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
		configPath := filepath.Join(cp.Dir, "kueue.yaml")
		cfg, err := kueueConfig(webhookPort, k.HealthAddr, wio.LocalServingCertDir, o)
		if err != nil {
			return err
		}
		if err := os.WriteFile(configPath, cfg, 0o600); err != nil {
			return fmt.Errorf("write kueue config: %w", err)
		}
		bin, args, err := kueueCommand(cp.Dir, wio.LocalServingCertDir,
			filepath.Join(o.Assets, "kueue"), "--config="+configPath, "--zap-log-level=2")
		if err != nil {
			return err
		}
		p, err := StartProcess("kueue", bin, args,
			[]string{"KUBECONFIG=" + cp.KubeconfigPath}, filepath.Join(cp.Dir, "kueue.log"))
		if err != nil {
			return err
		}
		k.Process = p
		err = p.WaitHTTP(ctx, "http://"+k.HealthAddr+"/readyz", nil, 90*time.Second, func(status int) bool { return status == 200 })
		if err != nil {
			_ = p.Stop(10 * time.Second) // err carries its log tail
			k.Process = nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := installKueueWebhooks(ctx, cp.Client, filepath.Join(o.Assets, "webhook", "manifests.yaml"), webhookPort, wio.LocalServingCAData); err != nil {
		return nil, errors.Join(err, k.Stop())
	}
	return k, nil
}

// Stop stops the controller manager.
func (k *Kueue) Stop() error {
	if k == nil || k.Process == nil {
		return nil
	}
	return k.Process.Stop(10 * time.Second)
}

// LogTail returns the last n lines of Kueue's log.
func (k *Kueue) LogTail(n int) string {
	if k == nil || k.Process == nil {
		return ""
	}
	return k.Process.LogTail(n)
}

// kueueConfig is a Kueue Configuration for one process beside envtest:
// loopback addresses, no leader election, no metrics server, the given
// certificate directory and internal certificate management off.
func kueueConfig(webhookPort int, healthAddr, certDir string, o KueueOptions) ([]byte, error) {
	gates := map[string]bool{"VisibilityOnDemand": false}
	for k, v := range o.FeatureGates {
		gates[k] = v
	}
	cfg := map[string]any{
		"apiVersion":             "config.kueue.x-k8s.io/v1beta2",
		"kind":                   "Configuration",
		"namespace":              KueueNamespace,
		"health":                 map[string]any{"healthProbeBindAddress": healthAddr},
		"metrics":                map[string]any{"bindAddress": "0"},
		"webhook":                map[string]any{"host": "127.0.0.1", "port": webhookPort, "certDir": certDir},
		"leaderElection":         map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{"enable": false},
		"clientConnection":       map[string]any{"qps": 300, "burst": 500},
		"integrations":           map[string]any{"frameworks": o.Frameworks},
		"featureGates":           gates,
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kueue config: %w", err)
	}
	return out, nil
}

// installKueueWebhooks creates Kueue's webhook configurations from its
// manifests with every service reference turned into a URL on
// 127.0.0.1:port and the pod webhooks skipping kube-system and
// KueueNamespace, as Kueue's kustomization does.
func installKueueWebhooks(ctx context.Context, c client.Client, manifests string, port int, caBundle []byte) error {
	data, err := os.ReadFile(manifests)
	if err != nil {
		return fmt.Errorf("read kueue webhook manifests: %w", err)
	}
	skip := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", KueueNamespace},
	}}}
	url := func(cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
		u := fmt.Sprintf("https://127.0.0.1:%d%s", port, *cc.Service.Path)
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
	}
	isPod := func(rules []admissionregistrationv1.RuleWithOperations) bool {
		for _, r := range rules {
			for _, res := range r.Resources {
				if res == "pods" {
					return true
				}
			}
		}
		return false
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decode %s: %w", manifests, err)
		}
		if raw == nil {
			continue
		}
		doc, err := yaml.Marshal(raw)
		if err != nil {
			return fmt.Errorf("re-encode %s: %w", manifests, err)
		}
		var obj client.Object
		switch raw["kind"] {
		case "MutatingWebhookConfiguration":
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &m); err != nil {
				return fmt.Errorf("decode %s: %w", manifests, err)
			}
			for i := range m.Webhooks {
				w := &m.Webhooks[i]
				w.ClientConfig = url(w.ClientConfig)
				if isPod(w.Rules) {
					w.NamespaceSelector = skip
				}
			}
			m.Name = "kueue-" + m.Name
			obj = &m
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &v); err != nil {
				return fmt.Errorf("decode %s: %w", manifests, err)
			}
			for i := range v.Webhooks {
				w := &v.Webhooks[i]
				w.ClientConfig = url(w.ClientConfig)
				if isPod(w.Rules) {
					w.NamespaceSelector = skip
				}
			}
			v.Name = "kueue-" + v.Name
			obj = &v
		default:
			return fmt.Errorf("%s holds kind %v, want webhook configurations", manifests, raw["kind"])
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
	}
}
