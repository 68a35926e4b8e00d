package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/isamatch/isamatch/charts/render"
)

// placeholderRepo is the image prefix config/ and the chart ship with.
const placeholderRepo = "ghcr.io/isamatch"

// Files of dist/.
const (
	installFile   = "install.yaml"
	imagesFile    = "images.txt"
	checksumsFile = "SHA256SUMS"
	configDir     = "config"
	sbomDir       = "sbom"
)

// pinned is where the kustomizations of dist/config get their images:
// config/ itself (labeler, webhook), and the components that run an image
// of their own, which an overlay adds after config/'s images: has run.
var pinned = map[string][]string{
	"kustomization.yaml":                      {"labeler", "webhook"},
	"components/rebalance/kustomization.yaml": {"rebalancer"},
	"components/uninstall/kustomization.yaml": {"labeler"},
}

// writeDist empties o.Dist and writes the release files into it; it returns
// their paths relative to o.Dist.
func writeDist(ctx context.Context, o options, reg *registry, images []published) ([]string, error) {
	if err := os.RemoveAll(o.Dist); err != nil {
		return nil, fmt.Errorf("empty %s: %w", o.Dist, err)
	}
	if err := os.MkdirAll(filepath.Join(o.Dist, sbomDir), 0o755); err != nil {
		return nil, err
	}
	byApp := map[string]published{}
	var list strings.Builder
	for _, p := range images {
		byApp[p.App] = p
		fmt.Fprintf(&list, "%s@%s\n", p.Tag, p.Digest)
		for _, pl := range p.Platforms {
			fmt.Fprintf(&list, "  %s %s\n", pl.Platform, pl.Digest)
		}
		fmt.Fprintf(&list, "  sbom %s@%s\n", p.Tag.Context(), p.SBOMDigest)
		if err := os.WriteFile(filepath.Join(o.Dist, sbomDir, p.App+".spdx.json"), p.SBOM, 0o644); err != nil {
			return nil, err
		}
	}
	if err := copyConfig(o, byApp); err != nil {
		return nil, err
	}
	ch, err := packageChart(o, byApp)
	if err != nil {
		return nil, err
	}
	tgz, err := os.ReadFile(filepath.Join(o.Dist, ch.Metadata.Name+"-"+ch.Metadata.Version+".tgz"))
	if err != nil {
		return nil, err
	}
	chartRef, err := pushChart(reg, o, tgz, ch.Metadata.Version)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&list, "oci://%s\n", chartRef)
	if err := os.WriteFile(filepath.Join(o.Dist, imagesFile), []byte(list.String()), 0o644); err != nil {
		return nil, err
	}
	manifest, err := renderChart(ctx, ch)
	if err != nil {
		return nil, err
	}
	header := "# isamatch " + o.Version + ": `kubectl apply -k config` with every image pinned by digest (docs/install.md).\n" +
		"# Verify it: sha256sum -c SHA256SUMS; the digests are in images.txt.\n"
	if err := os.WriteFile(filepath.Join(o.Dist, installFile), []byte(header+manifest), 0o644); err != nil {
		return nil, err
	}
	if err := copyPlugin(o); err != nil {
		return nil, err
	}
	return writeChecksums(o.Dist)
}

// copyPlugin copies the regular files of o.Plugin into dist/.
func copyPlugin(o options) error {
	if o.Plugin == "" {
		return nil
	}
	entries, err := os.ReadDir(o.Plugin)
	if err != nil {
		return fmt.Errorf("--plugin: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(o.Plugin, e.Name()))
		if err != nil {
			return fmt.Errorf("--plugin: %w", err)
		}
		if _, err := os.Stat(filepath.Join(o.Dist, e.Name())); err == nil {
			return fmt.Errorf("--plugin: %s would replace a release file of that name", e.Name())
		}
		if err := os.WriteFile(filepath.Join(o.Dist, e.Name()), data, 0o644); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("--plugin %s holds no file: run go run ./hack/plugin --out %s first", o.Plugin, o.Plugin)
	}
	return nil
}

// copyConfig copies config/ to dist/config and pins the images of the
// kustomizations in pinned by digest.
func copyConfig(o options, byApp map[string]published) error {
	src := filepath.Join(o.Root, "config")
	dst := filepath.Join(o.Dist, configDir)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if apps, ok := pinned[filepath.ToSlash(rel)]; ok {
			if data, err = pinKustomization(data, apps, byApp); err != nil {
				return fmt.Errorf("pin the images of config/%s: %w", rel, err)
			}
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copy config/ to %s: %w", dst, err)
	}
	return nil
}

// pinKustomization sets, in a kustomization's images:, each app's image to
// its pushed digest (replacing an entry of that name), keeping comments.
func pinKustomization(data []byte, apps []string, byApp map[string]published) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a YAML mapping")
	}
	top := doc.Content[0]
	images := mappingValue(top, "images")
	if images == nil {
		images = &yaml.Node{Kind: yaml.SequenceNode}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "images"}, images)
	}
	for _, app := range apps {
		p, ok := byApp[app]
		if !ok {
			continue
		}
		placeholder := placeholderRepo + "/" + app
		images.Content = slices.DeleteFunc(images.Content, func(n *yaml.Node) bool {
			v := mappingValue(n, "name")
			return v != nil && v.Value == placeholder
		})
		images.Content = append(images.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "name"}, {Kind: yaml.ScalarNode, Value: placeholder},
			{Kind: yaml.ScalarNode, Value: "newName"}, {Kind: yaml.ScalarNode, Value: p.Tag.Context().Name()},
			{Kind: yaml.ScalarNode, Value: "digest"}, {Kind: yaml.ScalarNode, Value: p.Digest.String()},
		}})
	}
	return encodeYAML(&doc)
}

// encodeYAML writes doc back, comments kept, indented by two.
func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// mappingValue is the value of key in the mapping node m, nil if absent.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// packageChart writes dist/isamatch-<version>.tgz: charts/isamatch with the
// release's version and its images pinned by digest in values.yaml
// (comments kept), every file dated o.Epoch.
func packageChart(o options, byApp map[string]published) (*chart.Chart, error) {
	ch, err := loader.Load(filepath.Join(o.Root, "charts", "isamatch"))
	if err != nil {
		return nil, fmt.Errorf("load the chart: %w", err)
	}
	ch.Metadata.Version = strings.TrimPrefix(o.Version, "v")
	ch.Metadata.AppVersion = o.Version
	for _, f := range ch.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		if f.Data, err = pinValues(f.Data, o.Version, byApp); err != nil {
			return nil, fmt.Errorf("pin the chart's images: %w", err)
		}
		if ch.Values, err = common.ReadValues(f.Data); err != nil {
			return nil, fmt.Errorf("the chart's pinned values: %w", err)
		}
	}
	ch.ModTime = o.Epoch
	ch.SchemaModTime = o.Epoch
	for _, files := range [][]*common.File{ch.Raw, ch.Templates, ch.Files} {
		for _, f := range files {
			f.ModTime = o.Epoch
		}
	}
	if err := ch.Validate(); err != nil {
		return nil, fmt.Errorf("the chart: %w", err)
	}
	if _, err := chartutil.Save(ch, o.Dist); err != nil {
		return nil, fmt.Errorf("package the chart: %w", err)
	}
	return ch, nil
}

// pinValues sets images.<app>.tag to version and images.<app>.digest to
// the pushed digest in the chart's values.yaml, and images.<app>.repository
// to where it was pushed.
func pinValues(data []byte, version string, byApp map[string]published) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	images := mappingValue(doc.Content[0], "images")
	if images == nil {
		return nil, fmt.Errorf("values.yaml has no images:")
	}
	for app, p := range byApp {
		img := mappingValue(images, app)
		if img == nil {
			return nil, fmt.Errorf("values.yaml has no images.%s", app)
		}
		for key, v := range map[string]string{"repository": p.Tag.Context().Name(), "tag": version, "digest": p.Digest.String()} {
			n := mappingValue(img, key)
			if n == nil {
				return nil, fmt.Errorf("values.yaml has no images.%s.%s", app, key)
			}
			n.Value, n.Style = v, 0
		}
	}
	return encodeYAML(&doc)
}

// renderChart is the chart's manifest with its (pinned) default values, as
// `helm template` prints it, without the uninstall hooks.
func renderChart(ctx context.Context, ch *chart.Chart) (string, error) {
	// The oldest release the chart supports (Chart.yaml kubeVersion):
	// nothing it renders depends on the version.
	rel, err := render.Chart(ctx, ch, nil, common.KubeVersion{Version: "v1.30.0", Major: "1", Minor: "30"})
	if err != nil {
		return "", fmt.Errorf("render the chart: %w", err)
	}
	return rel.Manifest, nil
}

// writeChecksums writes SHA256SUMS, in sha256sum's format, of every other
// file under dir, and returns every file's path relative to dir.
func writeChecksums(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var sums strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	if err := os.WriteFile(filepath.Join(dir, checksumsFile), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, checksumsFile), nil
}
