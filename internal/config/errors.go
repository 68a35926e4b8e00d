package config

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Errors words validation errors for the user: an error about a field
// that one of layers set names the last file that did (the one to fix),
// gate.timeout: Invalid value: ... after "/etc/isamatch/config.yaml: ";
// an error about a default is as it is. nil when errs is empty.
func Errors(errs field.ErrorList, layers []Layer) error {
	if len(errs) == 0 {
		return nil
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		if file := Source(layers, e.Field); file != "" {
			out = append(out, fmt.Errorf("%s: %w", file, e))
			continue
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
