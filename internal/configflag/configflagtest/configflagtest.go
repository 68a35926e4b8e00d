// Package configflagtest checks a binary's table of removed flags the same
// way for the webhook and the labeler. Tests only: it imports testing.
package configflagtest

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/configflag"
)

// Binary is what the checks need of one binary.
type Binary struct {
	// Name prefixes its errors ("webhook").
	Name string
	// Run runs it with args and returns its exit code.
	Run func(args []string, stderr io.Writer) int
	// WithConfig are the arguments of a run with a configuration file
	// that would otherwise start (the removed flag is added after them).
	WithConfig []string
	// Load decodes a configuration file of its kind.
	Load func(data []byte) error
	// Header is the file's apiVersion and kind lines.
	Header string
	// Parse registers its flags on fs and parses args.
	Parse func(fs *flag.FlagSet, args []string) error
	// Removed is its table of removed flags, Kept the flags it has.
	Removed []configflag.Removed
	Kept    []string
}

// RemovedFlags: each removed flag, given alone or beside a configuration
// file, fails with exit code 2 and an error naming the flag and the field
// that replaces it, a field the file really has.
func RemovedFlags(t *testing.T, b Binary) {
	t.Helper()
	for _, r := range b.Removed {
		for _, args := range [][]string{{"--" + r.Name + "=1"}, append(slices.Clone(b.WithConfig), "-"+r.Name, "1")} {
			var stderr strings.Builder
			if code := b.Run(args, &stderr); code != 2 {
				t.Errorf("%s %q exited %d, want 2", b.Name, args, code)
			}
			want := b.Name + ": flag --" + r.Name + " was removed: set " + r.Field + " in the file --config names (docs/configuration.md)\n"
			if diff := cmp.Diff(want, stderr.String()); diff != "" {
				t.Errorf("%s %q stderr (-want +got):\n%s", b.Name, args, diff)
			}
		}
		// The field is one a file may set: the table names no field that
		// does not exist.
		if got := componentconfig.Source([]componentconfig.Layer{{Path: "x", Data: []byte(yamlSetting(r.Field))}}, r.Field); got != "x" {
			t.Errorf("--%s: field %q not found in the YAML it makes", r.Name, r.Field)
		}
		if err := b.Load([]byte(b.Header + yamlSetting(r.Field))); err != nil && strings.Contains(err.Error(), "unknown field") {
			t.Errorf("--%s: field %s is not a field of the %s's configuration: %v", r.Name, r.Field, b.Name, err)
		}
	}
}

// yamlSetting is a YAML document setting the field at path to null.
func yamlSetting(path string) string {
	keys := strings.Split(path, ".")
	var b strings.Builder
	for i, k := range keys {
		b.WriteString(strings.Repeat("  ", i) + k + ":")
		if i < len(keys)-1 {
			b.WriteString("\n")
		}
	}
	return b.String() + " null\n"
}

// HelpListsKept: --help lists the kept flags only, and none of them is a
// removed one.
func HelpListsKept(t *testing.T, b Binary) {
	t.Helper()
	fs := flag.NewFlagSet(b.Name, flag.ContinueOnError)
	var help strings.Builder
	fs.SetOutput(&help)
	if err := b.Parse(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("%s --help: %v, want flag.ErrHelp", b.Name, err)
	}
	var got []string
	fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
	if diff := cmp.Diff(b.Kept, got); diff != "" {
		t.Errorf("registered flags (-want +got):\n%s", diff)
	}
	for _, name := range b.Kept {
		if !strings.Contains(help.String(), "-"+name) {
			t.Errorf("--help does not list -%s:\n%s", name, help.String())
		}
	}
	for _, r := range b.Removed {
		if slices.Contains(b.Kept, r.Name) {
			t.Errorf("--%s is both kept and removed", r.Name)
		}
		if strings.Contains(help.String(), "-"+r.Name+" ") || strings.Contains(help.String(), "-"+r.Name+"\n") {
			t.Errorf("--help lists the removed flag -%s", r.Name)
		}
	}
}
