package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// WebhookConfigFile is the MutatingWebhookConfiguration config/webhook
// ships, relative to the repository root. It is the only copy: the suites,
// the demo and the bench all install this file.
const WebhookConfigFile = "config/webhook/mutatingwebhookconfiguration.yaml"

// ShippedWebhookConfiguration reads WebhookConfigFile under repoRoot as
// `kubectl apply -k config` creates it. Unknown fields are an error, so a
// typo in the file fails here instead of being dropped.
func ShippedWebhookConfiguration(repoRoot string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	path := filepath.Join(repoRoot, WebhookConfigFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the shipped webhook configuration: %s does not exist: run from a checkout of the isamatch repository", path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the shipped webhook configuration: %w", err)
	}
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if cfg.Kind != "MutatingWebhookConfiguration" {
		return nil, fmt.Errorf("%s holds kind %q, want MutatingWebhookConfiguration", path, cfg.Kind)
	}
	if len(cfg.Webhooks) == 0 {
		return nil, fmt.Errorf("%s has no webhooks", path)
	}
	for _, w := range cfg.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil {
			return nil, fmt.Errorf("webhook %s in %s has no clientConfig.service.path", w.Name, path)
		}
	}
	return &cfg, nil
}

// EnvtestWebhookConfiguration is the shipped configuration (rules,
// failurePolicy, namespaceSelector, timeout kept) as envtest's installer
// takes it: the installer turns the service reference into a URL on
// 127.0.0.1 with its own CA and adds the path's leading "/" itself, so the
// path loses its own.
func EnvtestWebhookConfiguration(repoRoot string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	cfg, err := ShippedWebhookConfiguration(repoRoot)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Webhooks {
		cc := &cfg.Webhooks[i].ClientConfig
		p := strings.TrimPrefix(*cc.Service.Path, "/")
		cc.Service.Path = &p
		cc.URL = nil
	}
	return cfg, nil
}
