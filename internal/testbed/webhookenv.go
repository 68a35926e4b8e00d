package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/manifests"
)

// WebhookDeploymentFile is the webhook's Deployment as config/ ships it,
// relative to the repository root.
const WebhookDeploymentFile = "config/webhook/deployment.yaml"

// ShippedWebhookEnv is the environment the shipped Deployment gives the
// webhook container, as far as the manifest decides it
// (manifests.ResolvedEnv: values and the container's own resources, such
// as the memory request the webhook makes its soft memory limit), as
// NAME=VALUE. A harness that runs the webhook binary as the cluster
// would runs it with these.
func ShippedWebhookEnv(repoRoot string) ([]string, error) {
	path := filepath.Join(repoRoot, WebhookDeploymentFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the shipped webhook Deployment: %s does not exist: run from a checkout of the isamatch repository", path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the shipped webhook Deployment: %w", err)
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &dep); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == "webhook" {
			env, err := manifests.ResolvedEnv(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return env, nil
		}
	}
	return nil, fmt.Errorf("%s has no container named webhook", path)
}
