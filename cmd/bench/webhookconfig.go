package main

import (
	"fmt"

	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/config/webhookconfig"
)

// checkWebhookConfigDir reads the drop-ins of dir as the webhook will and
// validates the configuration they make over the defaults, so that a typo
// fails before the cluster starts rather than in the webhook's log.
func checkWebhookConfigDir(dir string) error {
	layers, err := componentconfig.ReadDropIns(dir)
	if err != nil {
		return fmt.Errorf("--webhook-config-dir: %w", err)
	}
	if len(layers) == 0 {
		return fmt.Errorf("--webhook-config-dir: %s holds no *.yaml, *.yml or *.json file", dir)
	}
	c, err := webhookconfig.LoadLayers(layers)
	if err != nil {
		return fmt.Errorf("--webhook-config-dir: %w", err)
	}
	if err := webhookconfig.Validate(&c).ToAggregate(); err != nil {
		return fmt.Errorf("--webhook-config-dir: %w", err)
	}
	return nil
}
