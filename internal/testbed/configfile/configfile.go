package configfile

import (
	"bytes"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/config/webhookconfig"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// Webhook writes, as a new file in dir, the webhook's defaults
// (webhookconfig.Default) changed by each configure in order, and
// returns the file's path for the webhook's --config. The suites, the demo
// and the bench configure the binary through this file, as the shipped
// Deployment does: the webhook takes no setting as a flag.
func Webhook(dir string, configure ...func(*v1alpha1.WebhookConfiguration)) (string, error) {
	c := webhookconfig.Default()
	for _, f := range configure {
		if f != nil {
			f(&c)
		}
	}
	c.APIVersion, c.Kind = v1alpha1.GroupVersion.String(), v1alpha1.WebhookConfigurationKind
	return writeConfig(dir, "webhook-*.yaml", &c, func(data []byte) (any, error) {
		loaded, err := webhookconfig.Load(data)
		return &loaded, err
	})
}

// Labeler is Webhook for the labeler: a
// LabelerConfiguration file over componentconfig.DefaultLabeler.
func Labeler(dir string, configure ...func(*v1alpha1.LabelerConfiguration)) (string, error) {
	c := componentconfig.DefaultLabeler()
	for _, f := range configure {
		if f != nil {
			f(&c)
		}
	}
	c.APIVersion, c.Kind = v1alpha1.GroupVersion.String(), v1alpha1.LabelerConfigurationKind
	return writeConfig(dir, "labeler-*.yaml", &c, func(data []byte) (any, error) {
		loaded, err := componentconfig.LoadLabeler(data)
		return &loaded, err
	})
}

// writeConfig marshals c into a new file in dir named after pattern
// (os.CreateTemp), after checking that load reads the same configuration
// back: a field the YAML left out (omitempty) would otherwise come back as
// its default, and the binary would run with another value than the
// caller set.
func writeConfig(dir, pattern string, c any, load func([]byte) (any, error)) (string, error) {
	data, err := yaml.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("marshal the configuration: %w", err)
	}
	loaded, err := load(data)
	if err != nil {
		return "", fmt.Errorf("read the configuration back: %w\n%s", err, data)
	}
	again, err := yaml.Marshal(loaded)
	if err != nil {
		return "", fmt.Errorf("marshal the configuration read back: %w", err)
	}
	if !bytes.Equal(data, again) {
		return "", fmt.Errorf("the configuration does not read back as written (a field left out returns to its default): wrote\n%s\nread\n%s", data, again)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("create the configuration file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}
