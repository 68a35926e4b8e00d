package configflag

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Flags registers flags on FS, each bound to one configuration field
// whose path it records; the flag's default is the field's value at
// registration.
type Flags struct {
	FS *flag.FlagSet
	// paths maps a flag's name to its field's path (gate.timeout).
	paths map[string]string
}

// New returns Flags registering on fs.
func New(fs *flag.FlagSet) *Flags {
	return &Flags{FS: fs, paths: map[string]string{}}
}

// usage marks a flag deprecated in its help text, naming its field.
func (f *Flags) usage(name, path, usage string) string {
	f.paths[name] = path
	return usage + " (deprecated: set " + path + " in the --config file)"
}

// String binds a string field.
func (f *Flags) String(p *string, name, path, usage string) {
	f.FS.StringVar(p, name, *p, f.usage(name, path, usage))
}

// Bool binds a bool field.
func (f *Flags) Bool(p *bool, name, path, usage string) {
	f.FS.BoolVar(p, name, *p, f.usage(name, path, usage))
}

// Int binds an int field.
func (f *Flags) Int(p *int, name, path, usage string) {
	f.FS.IntVar(p, name, *p, f.usage(name, path, usage))
}

// Int64 binds an int64 field.
func (f *Flags) Int64(p *int64, name, path, usage string) {
	f.FS.Int64Var(p, name, *p, f.usage(name, path, usage))
}

// Uint binds a uint field.
func (f *Flags) Uint(p *uint, name, path, usage string) {
	f.FS.UintVar(p, name, *p, f.usage(name, path, usage))
}

// Duration binds a duration field.
func (f *Flags) Duration(p *metav1.Duration, name, path, usage string) {
	f.FS.DurationVar(&p.Duration, name, p.Duration, f.usage(name, path, usage))
}

// List binds a list field to a repeatable flag: the flag's values replace
// the list (a file's included), in the order given.
func (f *Flags) List(p *[]string, name, path, usage string) {
	f.FS.Var(&listValue{p: p}, name, f.usage(name, path, usage))
}

// OptionalBool binds a bool field whose nil means "decided at run time";
// def is the flag's default as its help shows it.
func (f *Flags) OptionalBool(p **bool, def bool, name, path, usage string) {
	f.FS.Var(&optionalBool{p: p, def: def}, name, f.usage(name, path, usage))
}

// Path is the field path of a flag bound here, "" for another flag.
func (f *Flags) Path(name string) string { return f.paths[name] }

// Given lists the flags bound here that args set, as --name, in the order
// of the FlagSet's names.
func (f *Flags) Given() []string {
	var given []string
	f.FS.Visit(func(fl *flag.Flag) {
		if _, ok := f.paths[fl.Name]; ok {
			given = append(given, "--"+fl.Name)
		}
	})
	return given
}

// Overlay parses args again, onto file, with the flags bind registers:
// the flags given on the command line override the file's fields. It
// returns the flags that did. args must have parsed once already.
func Overlay[T any](args []string, file *T, bind func(*Flags, *T)) ([]string, error) {
	fs := flag.NewFlagSet("overlay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := New(fs)
	bind(f, file)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f.Given(), nil
}

// listValue is a repeatable flag whose first value replaces the list.
type listValue struct {
	p   *[]string
	set bool
}

func (l *listValue) String() string {
	if l == nil || l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l *listValue) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	if !l.set {
		*l.p, l.set = nil, true
	}
	*l.p = append(*l.p, v)
	return nil
}

// optionalBool is a bool flag over a *bool.
type optionalBool struct {
	p   **bool
	def bool
}

func (b *optionalBool) String() string {
	if b == nil || b.p == nil {
		return ""
	}
	if *b.p == nil {
		return strconv.FormatBool(b.def)
	}
	return strconv.FormatBool(**b.p)
}

func (b *optionalBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	*b.p = &x
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// durationFlag tells whether a flag holds a duration, whose value an
// error shows unquoted as the flag takes it.
func durationFlag(fl *flag.Flag) bool {
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(time.Duration)
	return ok
}
