package configflag

import (
	"flag"
	"fmt"
	"strings"
)

// Removed is a flag a binary no longer takes and the configuration field
// that replaces it.
type Removed struct {
	// Name is the flag without dashes (gate-timeout).
	Name string
	// Field is the field's path in the configuration file (gate.timeout).
	Field string
}

// RemovedError is a removed flag given on the command line.
type RemovedError struct {
	Removed
}

func (e *RemovedError) Error() string {
	return fmt.Sprintf("flag --%s was removed: set %s in the file --config names (docs/configuration.md)", e.Name, e.Field)
}

// Check returns a *RemovedError for the first flag of args that removed
// lists, nil when there is none. It reads args as fs.Parse will: flags up
// to the first non-flag argument or "--", "-name" and "--name" alike, the
// value of a flag fs registers and that is not boolean in the next
// argument unless given as -name=value. So a removed flag's name given as
// another flag's value is not taken for the flag, and the caller's
// fs.Parse reports what Check lets through (unknown flags, bad values).
func Check(fs *flag.FlagSet, removed []Removed, args []string) error {
	byName := make(map[string]Removed, len(removed))
	for _, r := range removed {
		byName[r.Name] = r
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return nil
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if r, ok := byName[name]; ok {
			return &RemovedError{Removed: r}
		}
		if f := fs.Lookup(name); f != nil && !hasValue && !isBool(f) {
			i++ // its value
		}
	}
	return nil
}

// isBool tells whether f takes no value argument, as the flag package
// decides it.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
