package configflag

import (
	"errors"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// index matches the list indexes of a field path, [3].
var index = regexp.MustCompile(`\[[0-9]+\]`)

// Errors words validation errors for the user: an error about a field
// that a flag given on the command line (or, without a file, any flag)
// set names the flag, --gate-timeout 0s: ...; one about a field a file
// set names the file and the field path. source names the file that set
// the field at a path, "" for none (nil: no files were read).
func (f *Flags) Errors(errs field.ErrorList, source func(path string) string, given []string) error {
	if len(errs) == 0 {
		return nil
	}
	onCommandLine := map[string]bool{}
	for _, g := range given {
		onCommandLine[g[2:]] = true
	}
	byPath := map[string]string{}
	for name, path := range f.paths {
		byPath[path] = name
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		name, ok := byPath[index.ReplaceAllString(e.Field, "")]
		file := ""
		if source != nil {
			file = source(e.Field)
		}
		switch {
		case ok && (source == nil || onCommandLine[name]):
			out = append(out, errors.New(f.flagError(name, e)))
		case file != "":
			out = append(out, fmt.Errorf("%s: %w", file, e))
		default:
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// flagError words e as the flag name's: --name value: detail.
func (f *Flags) flagError(name string, e *field.Error) string {
	s := "--" + name
	switch v := e.BadValue.(type) {
	case field.OmitValueType:
	case string:
		if fl := f.FS.Lookup(name); fl != nil && durationFlag(fl) {
			s += " " + v
		} else {
			s += fmt.Sprintf(" %q", v)
		}
	default:
		s += fmt.Sprintf(" %v", v)
	}
	return s + ": " + e.Detail
}
