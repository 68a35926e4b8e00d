package manifests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// ErrNoKubectl is returned by Render when kubectl is not on PATH.
var ErrNoKubectl = errors.New("kubectl not found on PATH: the manifest tests render config/ with `kubectl kustomize`")

// Render runs `kubectl kustomize` on configDir, or, with components (paths
// relative to configDir, such as "components/rebalance"), on an overlay in
// workDir that adds them to configDir (kustomize takes relative paths only),
// and decodes every rendered object with client-go's scheme.
func Render(ctx context.Context, workDir, configDir string, components ...string) ([]runtime.Object, error) {
	out, err := RenderYAML(ctx, workDir, configDir, components...)
	if err != nil {
		return nil, err
	}
	return decode(out, false)
}

// RenderKnown is Render that leaves out the objects of kinds client-go's
// scheme does not know (custom resources such as cert-manager's
// Certificate).
func RenderKnown(ctx context.Context, workDir, configDir string, components ...string) ([]runtime.Object, error) {
	out, err := RenderYAML(ctx, workDir, configDir, components...)
	if err != nil {
		return nil, err
	}
	return decode(out, true)
}

// RenderYAML is Render without the decoding: the multi-document YAML
// stream `kubectl kustomize` prints, custom resources included.
func RenderYAML(ctx context.Context, workDir, configDir string, components ...string) ([]byte, error) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return nil, ErrNoKubectl
	}
	configDir, err = filepath.Abs(configDir)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", configDir, err)
	}
	dir := configDir
	if len(components) > 0 {
		if dir, err = overlay(workDir, configDir, components); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w\n%s", dir, err, stderr.String())
	}
	return out, nil
}

// overlay writes a kustomization in workDir with configDir as its resource
// and components below configDir, and returns workDir.
func overlay(workDir, configDir string, components []string) (string, error) {
	rel, err := filepath.Rel(workDir, configDir)
	if err != nil {
		return "", fmt.Errorf("overlay of %s: %w", configDir, err)
	}
	var k strings.Builder
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel + "\ncomponents:\n")
	for _, c := range components {
		k.WriteString("  - " + filepath.Join(rel, c) + "\n")
	}
	if err := os.WriteFile(filepath.Join(workDir, "kustomization.yaml"), []byte(k.String()), 0o600); err != nil {
		return "", fmt.Errorf("overlay of %s: %w", configDir, err)
	}
	return workDir, nil
}

// decode splits a multi-document YAML stream and decodes each object;
// with skipUnknown, it leaves out those of kinds the scheme lacks.
func decode(out []byte, skipUnknown bool) ([]runtime.Object, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	decoder := serializer.NewCodecFactory(s).UniversalDeserializer()
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split rendered YAML: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if skipUnknown && runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("decode rendered object: %w\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
}

// Named returns the objects of type T whose name, as getName reads it, is
// name.
func Named[T runtime.Object](objs []runtime.Object, name string, getName func(T) string) []T {
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok && getName(v) == name {
			found = append(found, v)
		}
	}
	return found
}
