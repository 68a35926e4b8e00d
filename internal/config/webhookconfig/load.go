package webhookconfig

import (
	"github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// Load decodes a WebhookConfiguration from YAML or JSON over the
// defaults: a field the file leaves out keeps its default.
func Load(data []byte) (v1alpha1.WebhookConfiguration, error) {
	c := Default()
	err := config.Decode(data, v1alpha1.WebhookConfigurationKind, &c)
	return c, err
}

// LoadLayers decodes a --config file and its --config-dir drop-ins
// (config.ReadLayers) over the defaults, in order (config.DecodeLayers).
func LoadLayers(layers []config.Layer) (v1alpha1.WebhookConfiguration, error) {
	c := Default()
	err := config.DecodeLayers(layers, v1alpha1.WebhookConfigurationKind, &c)
	return c, err
}
