package config

import (
	"errors"
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// MaxFileBytes bounds a configuration file: the shipped ones are a few
// kilobytes, and a ConfigMap holds at most 1 MiB.
const MaxFileBytes = 1 << 20

// LoadLabeler decodes a LabelerConfiguration from YAML or JSON over the
// defaults: a field the file leaves out keeps its default.
func LoadLabeler(data []byte) (v1alpha1.LabelerConfiguration, error) {
	c := DefaultLabeler()
	err := Decode(data, v1alpha1.LabelerConfigurationKind, &c)
	return c, err
}

// ReadFile reads a configuration file, bounded by MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, the most a configuration file may be", path, MaxFileBytes)
	}
	return data, nil
}

// Decode checks apiVersion and kind, then decodes data strictly into c
// (a pointer to the configuration, holding the defaults): an unknown field
// (names are case-sensitive) or a field given twice is an error naming it.
func Decode(data []byte, kind string, c any) error {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("not a %s: %w", kind, err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(j, &tm); err != nil {
		return fmt.Errorf("not a %s: %w", kind, err)
	}
	if want := v1alpha1.GroupVersion.String(); tm.APIVersion != want {
		return fmt.Errorf("apiVersion %q: want %s", tm.APIVersion, want)
	}
	if tm.Kind != kind {
		return fmt.Errorf("kind %q: want %s", tm.Kind, kind)
	}
	strict, err := sigsjson.UnmarshalStrict(j, c)
	if err != nil {
		return fmt.Errorf("decode %s: %w", kind, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("decode %s: %w", kind, errors.Join(strict...))
	}
	return nil
}
