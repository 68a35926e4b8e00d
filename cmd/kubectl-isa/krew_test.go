package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// krewPlugin is the part of krew's Plugin manifest the index checks.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// TestKrewManifest renders krew.yaml as krew-release-bot does (the tag, and
// each archive's URI and digest) and checks what krew-index requires: the
// plugin is named isa (kubectl isa), the version is the tag (a semver with
// v), each platform has a selector, an https URI of this release, a
// 64-hex-digit sha256 and the binary kubectl-isa.
func TestKrewManifest(t *testing.T) {
	raw, err := os.ReadFile("krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const tag = "v1.2.3"
	// krew-release-bot renders the URI's own {{ .TagName }} first.
	text := strings.ReplaceAll(string(raw), `/{{ .TagName }}/`, "/"+tag+"/")
	tmpl, err := template.New("krew").Funcs(template.FuncMap{
		"addURIAndSha": func(uri, _ string) string {
			return fmt.Sprintf("uri: %s\n      sha256: %x", uri, sha256.Sum256([]byte(uri)))
		},
	}).Parse(text)
	if err != nil {
		t.Fatalf("krew.yaml is not a template krew-release-bot can render: %v", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ TagName string }{tag}); err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("rendered manifest does not parse: %v\n%s", err, out.String())
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "isa" || p.Spec.Version != tag || p.Spec.ShortDescription == "" {
		t.Errorf("manifest header %+v", p)
	}
	digest := regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := map[string]bool{}
	for _, pl := range p.Spec.Platforms {
		key := pl.Selector.MatchLabels["os"] + "/" + pl.Selector.MatchLabels["arch"]
		seen[key] = true
		if !strings.HasPrefix(pl.URI, "https://github.com/isamatch/isamatch/releases/download/"+tag+"/kubectl-isa_"+strings.ReplaceAll(key, "/", "_")) {
			t.Errorf("%s: uri %q is not this release's archive for it", key, pl.URI)
		}
		if !digest.MatchString(pl.SHA256) {
			t.Errorf("%s: sha256 %q", key, pl.SHA256)
		}
		if bin := strings.TrimSuffix(pl.Bin, ".exe"); bin != "kubectl-isa" {
			t.Errorf("%s: bin %q, want kubectl-isa", key, pl.Bin)
		}
	}
	for _, want := range []string{"linux/amd64", "linux/arm64", "linux/riscv64", "darwin/arm64"} {
		if !seen[want] {
			t.Errorf("no platform %s", want)
		}
	}
}
