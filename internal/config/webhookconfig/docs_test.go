package webhookconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// yamlBlock matches a fenced YAML block of a Markdown file.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// dropInBlock matches a block that shows a drop-in: its first line names
// the file, # 90-site.yaml.
var dropInBlock = regexp.MustCompile(`^# [0-9a-z-]+\.yaml\n`)

// TestDocumentedFiles: the full files docs/configuration.md shows load
// strictly, validate, and are the defaults, and the drop-ins it shows load
// and validate, so the page cannot drift from the types.
func TestDocumentedFiles(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	var webhooks, labelers int
	for _, m := range yamlBlock.FindAllSubmatch(page, -1) {
		block := m[1]
		switch {
		case dropInBlock.Match(block) && strings.Contains(string(block), "kind: WebhookConfiguration"):
			c, err := LoadLayers([]config.Layer{{Path: "docs/configuration.md", Data: block}})
			if err != nil {
				t.Fatalf("docs/configuration.md's drop-in: %v", err)
			}
			if errs := Validate(&c); len(errs) > 0 {
				t.Errorf("docs/configuration.md's drop-in: %v", errs.ToAggregate())
			}
		case strings.Contains(string(block), "kind: WebhookConfiguration"):
			webhooks++
			c, err := Load(block)
			if err != nil {
				t.Fatalf("docs/configuration.md's WebhookConfiguration: %v", err)
			}
			if errs := Validate(&c); len(errs) > 0 {
				t.Errorf("docs/configuration.md's WebhookConfiguration: %v", errs.ToAggregate())
			}
			if diff := cmp.Diff(Default(), c, emptyIsNil); diff != "" {
				t.Errorf("docs/configuration.md's WebhookConfiguration is not the defaults (-want +got):\n%s", diff)
			}
		case strings.Contains(string(block), "kind: LabelerConfiguration"):
			labelers++
			c, err := config.LoadLabeler(block)
			if err != nil {
				t.Fatalf("docs/configuration.md's LabelerConfiguration: %v", err)
			}
			if diff := cmp.Diff(config.DefaultLabeler(), c); diff != "" {
				t.Errorf("docs/configuration.md's LabelerConfiguration is not the defaults (-want +got):\n%s", diff)
			}
		}
	}
	if webhooks != 1 || labelers != 1 {
		t.Errorf("docs/configuration.md has %d full WebhookConfiguration and %d LabelerConfiguration files, want 1 each", webhooks, labelers)
	}
}

// emptyIsNil compares the registry's lists with [] and nil alike.
var emptyIsNil = cmp.Transformer("emptyIsNil", func(r v1alpha1.Registry) v1alpha1.Registry {
	for _, l := range []*[]string{&r.InsecureRegistries, &r.AllowRegistries, &r.ClusterNetworks, &r.Mirrors} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return r
})
