package charts

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// rendered is one component's configuration as the chart renders it: the
// file in its ConfigMap, that ConfigMap's name, and the pod template's
// checksum/config and mounted ConfigMap.
type rendered struct {
	file, configMap, checksum, mounted string
}

// renderedConfig finds the configuration of the workload of kind named
// name, whose ConfigMap's name starts with cmPrefix.
func renderedConfig(t *testing.T, manifest, kind, name, cmPrefix string) rendered {
	t.Helper()
	var out rendered
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		switch {
		case head.Kind == "ConfigMap" && strings.HasPrefix(head.Metadata.Name, cmPrefix) && len(head.Metadata.Name) == len(cmPrefix)+10:
			// cmPrefix and the hash: not the drop-ins' ConfigMap, whose name
			// it begins too.
			var cm corev1.ConfigMap
			if err := yaml.Unmarshal(doc, &cm); err != nil {
				t.Fatal(err)
			}
			out.file, out.configMap = cm.Data["config.yaml"], cm.Name
		case head.Kind == kind && head.Metadata.Name == name:
			var tmpl struct {
				Spec struct {
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(doc, &tmpl); err != nil {
				t.Fatal(err)
			}
			out.checksum = tmpl.Spec.Template.Annotations["checksum/config"]
			for _, v := range tmpl.Spec.Template.Spec.Volumes {
				if v.Name == "config" && v.ConfigMap != nil {
					out.mounted = v.ConfigMap.Name
				}
			}
		}
	}
	if out.configMap == "" {
		t.Fatalf("the chart renders no ConfigMap %s<hash>", cmPrefix)
	}
	if sum := sha256.Sum256([]byte(out.file)); out.checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("%s %s: checksum/config %q, want the SHA-256 of its file %s", kind, name, out.checksum, hex.EncodeToString(sum[:]))
	}
	if out.mounted != out.configMap {
		t.Errorf("%s %s mounts ConfigMap %q, want %s", kind, name, out.mounted, out.configMap)
	}
	return out
}

// strictDecode decodes a configuration file strictly, as the binaries do
// (cmd/webhook and cmd/labeler test their loader on config/ itself; this
// module stays clear of their dependencies).
func strictDecode(t *testing.T, file string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(file), into); err != nil {
		t.Fatalf("the chart's configuration file does not decode strictly: %v\n%s", err, file)
	}
}

// TestConfigValues: the chart's values reach the components' configuration
// files, which load strictly, and a changed file gets a new ConfigMap name
// and checksum, so helm upgrade rolls the pods.
func TestConfigValues(t *testing.T) {
	defaults, _ := renderChart(t, nil)
	changed, _ := renderChart(t, map[string]any{
		"webhook": map[string]any{"enforcement": "warn", "resolve": "sync", "insecureRegistries": []any{"lab:5000"},
			"config": map[string]any{"gate": map[string]any{"timeout": "30s"}, "admission": map[string]any{"budget": "3s"}}},
		"labeler": map[string]any{"interval": "5m", "config": map[string]any{"commands": map[string]any{"timeout": "30s"}}},
	})

	whBefore := renderedConfig(t, defaults, "Deployment", "isamatch-webhook", "isamatch-webhook-config-")
	wh := renderedConfig(t, changed, "Deployment", "isamatch-webhook", "isamatch-webhook-config-")
	if wh.configMap == whBefore.configMap || wh.checksum == whBefore.checksum {
		t.Errorf("changed webhook values keep ConfigMap %s and checksum %s: the pods would not roll", wh.configMap, wh.checksum)
	}
	var c v1alpha1.WebhookConfiguration
	strictDecode(t, wh.file, &c)
	if c.Admission.Enforcement != "warn" || c.Admission.Resolve != "sync" || c.Admission.Budget.Duration != 3*time.Second ||
		c.Gate.Timeout.Duration != 30*time.Second || strings.Join(c.Registry.InsecureRegistries, ",") != "lab:5000" || c.Server.Port != 9443 {
		t.Errorf("the chart's webhook configuration lacks its values or the shipped file's:\n%s", wh.file)
	}

	lbBefore := renderedConfig(t, defaults, "DaemonSet", "isamatch-labeler", "isamatch-labeler-config-")
	lb := renderedConfig(t, changed, "DaemonSet", "isamatch-labeler", "isamatch-labeler-config-")
	if lb.configMap == lbBefore.configMap || lb.checksum == lbBefore.checksum {
		t.Errorf("changed labeler values keep ConfigMap %s and checksum %s: the pods would not roll", lb.configMap, lb.checksum)
	}
	var l v1alpha1.LabelerConfiguration
	strictDecode(t, lb.file, &l)
	if l.Interval.Duration != 5*time.Minute || l.Commands.Timeout.Duration != 30*time.Second || l.Commands.UID != 65534 {
		t.Errorf("the chart's labeler configuration lacks its values or the shipped file's:\n%s", lb.file)
	}
}
