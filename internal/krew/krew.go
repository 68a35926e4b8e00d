// Package krew renders and checks the krew plugin manifest of kubectl-isa:
// its template (cmd/kubectl-isa/krew.yaml, in krew-release-bot's syntax) is
// rendered for a release with the digests of the archives the release
// built, as krew-release-bot renders it for krew-index.
package krew

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// TemplatePath is the manifest template, relative to the repository root.
const TemplatePath = "cmd/kubectl-isa/krew.yaml"

// ManifestName is the rendered manifest's file name in a release.
const ManifestName = "kubectl-isa.krew.yaml"

// Bin is the plugin's executable (kubectl isa).
const Bin = "kubectl-isa"

// uriPrefix is where the template's archives are downloaded from.
const uriPrefix = "https://github.com/isamatch/isamatch/releases/download/"

// Plugin is the part of krew's Plugin manifest krew-index checks.
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Platforms        []Platform `json:"platforms"`
	} `json:"spec"`
}

// Platform is one archive of the manifest.
type Platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

// OSArch is the platform's os/arch.
func (p Platform) OSArch() string {
	return p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
}

// Archive is the file name of the plugin's archive for goos/goarch: a
// .zip for Windows, a .tar.gz elsewhere, as krew expects them.
func Archive(goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return Bin + "_" + goos + "_" + goarch + ext
}

// Render renders tmpl for the release tag as krew-release-bot does: the
// tag in the URIs and the version, and each archive's URI and digest,
// which sha gives by the archive's file name. A platform whose archive sha
// does not have (ok false) is left out of the manifest; none left is an
// error.
func Render(tmpl []byte, tag string, sha func(archive string) (digest string, ok bool)) ([]byte, error) {
	// krew-release-bot renders the URIs' own {{ .TagName }} first.
	text := strings.ReplaceAll(string(tmpl), "/{{ .TagName }}/", "/"+tag+"/")
	t, err := template.New("krew").Option("missingkey=error").Funcs(template.FuncMap{
		"addURIAndSha": func(uri, _ string) string {
			digest, _ := sha(path.Base(uri))
			return fmt.Sprintf("uri: %s\n      sha256: %q", uri, digest)
		},
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s is not a template krew-release-bot can render: %w", TemplatePath, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, struct{ TagName string }{tag}); err != nil {
		return nil, fmt.Errorf("render %s: %w", TemplatePath, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out.Bytes(), &doc); err != nil {
		return nil, fmt.Errorf("the rendered %s does not parse: %w", TemplatePath, err)
	}
	spec, _ := doc["spec"].(map[string]any)
	platforms, _ := spec["platforms"].([]any)
	var kept []any
	for _, p := range platforms {
		if m, _ := p.(map[string]any); m != nil && m["sha256"] != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no archive of the manifest's platforms was built")
	}
	spec["platforms"] = kept
	return yaml.Marshal(doc)
}

// digest is a SHA-256 in hex.
var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Check parses a rendered manifest and checks what krew-index requires:
// the plugin is named isa (kubectl isa), its version is the tag, and each
// platform has a selector, the https URI of this release's archive for it,
// a SHA-256 and the executable kubectl-isa.
func Check(manifest []byte, tag string) (*Plugin, error) {
	var p Plugin
	if err := yaml.Unmarshal(manifest, &p); err != nil {
		return nil, fmt.Errorf("the manifest does not parse: %w", err)
	}
	var errs []error
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		errs = append(errs, fmt.Errorf("apiVersion %q, kind %q: want krew.googlecontainertools.github.com/v1alpha2 Plugin", p.APIVersion, p.Kind))
	}
	if p.Metadata.Name != "isa" {
		errs = append(errs, fmt.Errorf("name %q, want isa", p.Metadata.Name))
	}
	if p.Spec.Version != tag {
		errs = append(errs, fmt.Errorf("version %q, want the tag %s", p.Spec.Version, tag))
	}
	if p.Spec.ShortDescription == "" {
		errs = append(errs, errors.New("no shortDescription"))
	}
	if len(p.Spec.Platforms) == 0 {
		errs = append(errs, errors.New("no platforms"))
	}
	for _, pl := range p.Spec.Platforms {
		goos, goarch, _ := strings.Cut(pl.OSArch(), "/")
		if want := uriPrefix + tag + "/" + Archive(goos, goarch); pl.URI != want {
			errs = append(errs, fmt.Errorf("%s: uri %q, want %q", pl.OSArch(), pl.URI, want))
		}
		if !digest.MatchString(pl.SHA256) {
			errs = append(errs, fmt.Errorf("%s: sha256 %q is not 64 hex digits", pl.OSArch(), pl.SHA256))
		}
		if want := Bin + map[bool]string{true: ".exe"}[goos == "windows"]; pl.Bin != want {
			errs = append(errs, fmt.Errorf("%s: bin %q, want %s", pl.OSArch(), pl.Bin, want))
		}
	}
	return &p, errors.Join(errs...)
}

// Platforms lists the os/arch of every platform tmpl names, in its order.
func Platforms(tmpl []byte) ([]string, error) {
	out, err := Render(tmpl, "v0.0.0", func(string) (string, bool) { return strings.Repeat("0", 64), true })
	if err != nil {
		return nil, err
	}
	var p Plugin
	if err := yaml.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("the rendered %s does not parse: %w", TemplatePath, err)
	}
	list := make([]string, len(p.Spec.Platforms))
	for i, pl := range p.Spec.Platforms {
		list[i] = pl.OSArch()
	}
	return list, nil
}
