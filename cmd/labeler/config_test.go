package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeConfig writes a file (header included) and returns its path.
func writeConfig(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const header = "apiVersion: config.isamatch.io/v1alpha1\nkind: LabelerConfiguration\n"

// TestConfigFile: the --config file sets every setting, and its errors
// name the file and the field path.
func TestConfigFile(t *testing.T) {
	file := writeConfig(t, header+"interval: 5m\ncommands:\n  uid: 1000\n  gid: 1000\nemulation:\n  probePrograms: \"\"\n")
	parse := func(t *testing.T, args ...string) (options, error) {
		t.Helper()
		t.Setenv("NODE_NAME", "n1")
		fs := flag.NewFlagSet("labeler", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseArgs(fs, args)
	}
	defaults, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    func(o *options)
		wantErr string
	}{
		{name: "header only: the defaults", args: []string{"--config", writeConfig(t, header)}, want: func(*options) {}},
		{name: "file only", args: []string{"--config", file}, want: func(o *options) {
			o.interval, o.execUID, o.execGID, o.probePrograms = 5*time.Minute, 1000, 1000, ""
		}},
		{name: "a removed flag beside the file", args: []string{"--config", file, "--interval=1m"},
			wantErr: "flag --interval was removed: set interval in the file --config names (docs/configuration.md)"},
		{name: "invalid value names the file and the field path", args: []string{"--config", writeConfig(t, header+"commands:\n  uid: 0\n")},
			wantErr: "config.yaml: commands.uid: Invalid value: 0: host commands never run as root"},
		{name: "unknown field", args: []string{"--config", writeConfig(t, header+"interval: 1m\nintervall: 2m\n")}, wantErr: `unknown field "intervall"`},
		{name: "wrong kind", args: []string{"--config", writeConfig(t, "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n")},
			wantErr: `kind "WebhookConfiguration": want LabelerConfiguration`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseArgs(%q) error = %v, want one mentioning %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
			}
			want := defaults
			want.configFile = got.configFile
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
