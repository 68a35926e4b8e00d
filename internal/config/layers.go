package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// MaxDropIns bounds the files a drop-in directory may hold: a component
// or an overlay adds one each, and a ConfigMap holds at most 1 MiB.
const MaxDropIns = 64

// Layer is one configuration file: the --config file or a drop-in of the
// --config-dir directory.
type Layer struct {
	// Path names the file in errors.
	Path string
	Data []byte
}

// ReadLayers reads the configuration files a component was given: the
// --config file (when file is not ""), then the drop-ins of the
// --config-dir directory (when dir is not "") in name order, each over
// the ones before it.
func ReadLayers(file, dir string) ([]Layer, error) {
	var layers []Layer
	if file != "" {
		data, err := ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		layers = append(layers, Layer{Path: file, Data: data})
	}
	if dir != "" {
		dropIns, err := ReadDropIns(dir)
		if err != nil {
			return nil, fmt.Errorf("--config-dir: %w", err)
		}
		layers = append(layers, dropIns...)
	}
	return layers, nil
}

// ReadDropIns reads the drop-in files of dir in name order: its *.yaml,
// *.yml and *.json files, names beginning with "." skipped (a mounted
// ConfigMap's ..data links). Each is bounded by MaxFileBytes, their number
// by MaxDropIns.
func ReadDropIns(dir string) ([]Layer, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || e.IsDir() {
			continue
		}
		switch filepath.Ext(n) {
		case ".yaml", ".yml", ".json":
			names = append(names, n)
		}
	}
	if len(names) > MaxDropIns {
		return nil, fmt.Errorf("%s: %d configuration files, more than the %d a drop-in directory may hold", dir, len(names), MaxDropIns)
	}
	sort.Strings(names)
	layers := make([]Layer, 0, len(names))
	for _, n := range names {
		p := filepath.Join(dir, n)
		data, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		layers = append(layers, Layer{Path: p, Data: data})
	}
	return layers, nil
}

// DecodeLayers decodes each layer strictly (Decode) into c, which holds
// the defaults, in order: a field a layer names replaces what the defaults
// and the layers before it set (a list whole), a field it leaves out keeps
// theirs. Each layer is a configuration of kind with its apiVersion. An
// error names the layer.
func DecodeLayers(layers []Layer, kind string, c any) error {
	for _, l := range layers {
		if err := Decode(l.Data, kind, c); err != nil {
			return fmt.Errorf("%s: %w", l.Path, err)
		}
	}
	return nil
}

// LoadLabelerLayers decodes layers over the labeler's defaults
// (DecodeLayers).
func LoadLabelerLayers(layers []Layer) (v1alpha1.LabelerConfiguration, error) {
	c := DefaultLabeler()
	err := DecodeLayers(layers, v1alpha1.LabelerConfigurationKind, &c)
	return c, err
}

// subscript matches a list index or a map key in a field path, [3] or
// [docker.io].
var subscript = regexp.MustCompile(`\[[^\]]*\]`)

// Source is the path of the last layer that sets the field at path
// (admission.enforcement, registry.mirrors[0].host): the file to fix when
// its value is invalid. "" when no layer sets it (it is a default).
func Source(layers []Layer, path string) string {
	keys := strings.Split(subscript.ReplaceAllString(path, ""), ".")
	for i := len(layers) - 1; i >= 0; i-- {
		var doc any
		if yaml.Unmarshal(layers[i].Data, &doc) != nil {
			continue
		}
		if sets(doc, keys) {
			return layers[i].Path
		}
	}
	return ""
}

// sets reports whether doc holds the field at keys. A list is set whole,
// so a layer that sets a list sets every field of its items.
func sets(doc any, keys []string) bool {
	for _, k := range keys {
		if _, ok := doc.([]any); ok {
			return true
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		if doc, ok = m[k]; !ok {
			return false
		}
	}
	return true
}
