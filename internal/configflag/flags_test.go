package configflag

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cfg is a configuration with one field of each kind Flags binds.
type cfg struct {
	Name    string
	List    []string
	Wait    metav1.Duration
	Rotate  *bool
	Workers int
}

func bind(f *Flags, c *cfg) {
	f.String(&c.Name, "name", "name", "a name")
	f.List(&c.List, "item", "items", "an item (repeatable)")
	f.Duration(&c.Wait, "wait", "gate.wait", "a wait")
	f.OptionalBool(&c.Rotate, true, "rotate", "server.rotate", "rotate")
	f.Int(&c.Workers, "workers", "gate.workers", "workers")
}

func TestOverlay(t *testing.T) {
	args := []string{"--item=c", "--rotate=false", "--wait=3s"}
	file := cfg{Name: "file", List: []string{"a", "b"}, Wait: metav1.Duration{Duration: time.Second}, Workers: 4}
	given, err := Overlay(args, &file, bind)
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := cfg{Name: "file", List: []string{"c"}, Wait: metav1.Duration{Duration: 3 * time.Second}, Rotate: &no, Workers: 4}
	if diff := cmp.Diff(want, file); diff != "" {
		t.Errorf("Overlay() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"--item", "--rotate", "--wait"}, given); diff != "" {
		t.Errorf("Overlay() given (-want +got):\n%s", diff)
	}
}

func TestDefaultsAndHelp(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := cfg{Name: "default", Wait: metav1.Duration{Duration: time.Minute}}
	bind(New(fs), &c)
	if got := fs.Lookup("wait").DefValue; got != "1m0s" {
		t.Errorf("--wait default %q, want the field's 1m0s", got)
	}
	if got := fs.Lookup("rotate").Value.String(); got != "true" {
		t.Errorf("--rotate with the field unset shows %q, want its run-time default true", got)
	}
	if u := fs.Lookup("name").Usage; !strings.Contains(u, "(deprecated: set name in the --config file)") {
		t.Errorf("--name usage %q names no field", u)
	}
	if err := fs.Parse([]string{"--item="}); err == nil || !strings.Contains(err.Error(), "empty value") {
		t.Errorf("--item= error %v, want empty value", err)
	}
}

func TestErrors(t *testing.T) {
	errs := field.ErrorList{
		field.Invalid(field.NewPath("gate", "wait"), "0s", "must be positive"),
		field.Invalid(field.NewPath("name"), "x y", "no spaces"),
		field.Invalid(field.NewPath("items").Index(1), "a/b", "no slash"),
		field.Invalid(field.NewPath("gate", "workers"), int64(0), "want 1..8"),
	}
	tests := []struct {
		name  string
		file  string
		given []string
		want  []string
	}{
		{name: "flags only: every error names its flag", want: []string{
			"--wait 0s: must be positive", `--name "x y": no spaces`, `--item "a/b": no slash`, "--workers 0: want 1..8"}},
		{name: "a file: its fields by path, given flags by name", file: "/etc/c.yaml", given: []string{"--wait"}, want: []string{
			"--wait 0s: must be positive", `/etc/c.yaml: name: Invalid value: "x y": no spaces`,
			`/etc/c.yaml: items[1]: Invalid value: "a/b": no slash`, "/etc/c.yaml: gate.workers: Invalid value: 0: want 1..8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			f := New(fs)
			bind(f, &cfg{})
			var source func(string) string
			if tc.file != "" {
				source = func(string) string { return tc.file }
			}
			err := f.Errors(errs, source, tc.given)
			if err == nil {
				t.Fatal("Errors() = nil")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("Errors() (-want +got):\n%s", diff)
			}
		})
	}
	if err := New(flag.NewFlagSet("x", flag.ContinueOnError)).Errors(nil, nil, nil); err != nil {
		t.Errorf("Errors(nil) = %v, want nil", err)
	}
}
