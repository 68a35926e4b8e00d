package main

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	componentconfig "github.com/isamatch/isamatch/internal/config"
)

// keptFlags are the labeler's flags: every other setting is in the file.
var keptFlags = []string{"config", "config-dir", "kubeconfig", "log-format", "node-name", "once", "print", "prune", "v", "version"}

// TestRemovedFlags: each removed flag, given alone or beside a
// configuration file, fails with exit code 2 and an error naming the flag
// and the field that replaces it, a field the file really has.
func TestRemovedFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "n1")
	file := writeConfig(t, header)
	for _, r := range removedFlags {
		for _, args := range [][]string{{"--" + r.Name + "=1"}, {"--print", "--config", file, "-" + r.Name, "1"}} {
			var stderr bytes.Buffer
			if code := runWith(t.Context(), args, io.Discard, &stderr); code != exitUsage {
				t.Errorf("runWith(%q) = %d, want %d", args, code, exitUsage)
			}
			want := "labeler: flag --" + r.Name + " was removed: set " + r.Field + " in the file --config names (docs/configuration.md)\n"
			if diff := cmp.Diff(want, stderr.String()); diff != "" {
				t.Errorf("runWith(%q) stderr (-want +got):\n%s", args, diff)
			}
		}
		if got := componentconfig.Source([]componentconfig.Layer{{Path: "x", Data: []byte(yamlSetting(r.Field))}}, r.Field); got != "x" {
			t.Errorf("--%s: field %q not found in the YAML it makes", r.Name, r.Field)
		}
		if _, err := componentconfig.LoadLabeler([]byte(header + yamlSetting(r.Field))); err != nil && strings.Contains(err.Error(), "unknown field") {
			t.Errorf("--%s: field %s is not a LabelerConfiguration field: %v", r.Name, r.Field, err)
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

// TestHelpListsKeptFlags: --help lists the kept flags only, and none of
// them is a removed one.
func TestHelpListsKeptFlags(t *testing.T) {
	fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
	var help strings.Builder
	fs.SetOutput(&help)
	if _, err := parseArgs(fs, []string{"--help"}); err != flag.ErrHelp { //nolint:errorlint // parseArgs returns fs.Parse's error as is
		t.Fatalf("parseArgs(--help) = %v, want flag.ErrHelp", err)
	}
	var got []string
	fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
	if diff := cmp.Diff(keptFlags, got); diff != "" {
		t.Errorf("registered flags (-want +got):\n%s", diff)
	}
	for _, name := range keptFlags {
		if !strings.Contains(help.String(), "-"+name) {
			t.Errorf("--help does not list -%s:\n%s", name, help.String())
		}
	}
	for _, r := range removedFlags {
		if slices.Contains(keptFlags, r.Name) {
			t.Errorf("--%s is both kept and removed", r.Name)
		}
		if strings.Contains(help.String(), "-"+r.Name+" ") || strings.Contains(help.String(), "-"+r.Name+"\n") {
			t.Errorf("--help lists the removed flag -%s", r.Name)
		}
	}
}
