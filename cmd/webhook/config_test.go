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

// writeConfig writes a WebhookConfiguration file with body under its
// header and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	data := "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n" + body
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func parse(t *testing.T, args ...string) (options, error) {
	t.Helper()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv(NamespaceEnv, "")
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseArgs(fs, args)
}

// TestConfigFile: the --config file sets what the flags set, flags given
// on the command line override it, and its errors name the file and the
// field path.
func TestConfigFile(t *testing.T) {
	file := writeConfig(t, `
server:
  port: 10443
admission:
  enforcement: warn
gate:
  timeout: 30s
registry:
  insecureRegistries: [lab:80, lab:81]
misplacement:
  evict: true
`)
	defaults, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		want      func(o *options)
		overrides []string
		wantErr   string
	}{
		{name: "header only: the flags' defaults", args: []string{"--config", writeConfig(t, "")}, want: func(*options) {}},
		{name: "file only", args: []string{"--config", file}, want: func(o *options) {
			o.port, o.enforcement, o.gateTimeout, o.evictMisplaced = 10443, "warn", 30*time.Second, true
			o.insecureRegistries = stringList{"lab:80", "lab:81"}
		}},
		{name: "flags over the file", args: []string{"--port=11443", "--config", file, "--insecure-registry=lab:90", "--budget=2s"},
			overrides: []string{"--budget", "--insecure-registry", "--port"},
			want: func(o *options) {
				o.port, o.enforcement, o.gateTimeout, o.evictMisplaced, o.budget = 11443, "warn", 30*time.Second, true, 2*time.Second
				o.insecureRegistries = stringList{"lab:90"}
			}},
		{name: "a flag fixes the file's bad value", args: []string{"--config", writeConfig(t, "gate:\n  timeout: -1s\n"), "--gate-timeout=5s"},
			overrides: []string{"--gate-timeout"}, want: func(o *options) { o.gateTimeout = 5 * time.Second }},
		{name: "invalid value names the file and the field path", args: []string{"--config", writeConfig(t, "gate:\n  timeout: -1s\n")},
			wantErr: `config.yaml: gate.timeout: Invalid value: "-1s": want a duration in (0, 10m]`},
		{name: "a flag's bad value names the flag", args: []string{"--config", file, "--gate-attempt=1m"},
			wantErr: "--gate-attempt 1m0s: want a duration in (0, 30s] (gate.timeout)"},
		{name: "namespaces may not choose: an empty list", args: []string{"--config", writeConfig(t, "admission:\n  namespaceEnforcement: []\n")},
			want: func(o *options) { o.nsModes = nil }},
		{name: "a namespace mode that is no mode", args: []string{"--config", writeConfig(t, "admission:\n  namespaceEnforcement: [warn, audit]\n")},
			wantErr: `admission.namespaceEnforcement: Invalid value: "warn,audit": "audit" is not a mode`},
		{name: "unknown field", args: []string{"--config", writeConfig(t, "gate:\n  timout: 1s\n")}, wantErr: `unknown field "gate.timout"`},
		{name: "wrong apiVersion", args: []string{"--config", writeRaw(t, "apiVersion: v1\nkind: WebhookConfiguration\n")},
			wantErr: `apiVersion "v1": want config.isamatch.io/v1alpha1`},
		{name: "missing file", args: []string{"--config", "/nonexistent/config.yaml"}, wantErr: "--config: open /nonexistent/config.yaml"},
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
			want.configFile, want.overrides = got.configFile, tc.overrides
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// writeRaw writes a file as given, header included.
func writeRaw(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDeprecatedFlagsHelp: every flag but the process's own names the
// configuration field that replaces it.
func TestDeprecatedFlagsHelp(t *testing.T) {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseArgs(fs, nil); err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{"config": true, "kubeconfig": true, "v": true, "log-format": true, "version": true}
	fs.VisitAll(func(f *flag.Flag) {
		if deprecated := strings.Contains(f.Usage, "(deprecated: set "); deprecated == own[f.Name] {
			t.Errorf("--%s: deprecated %v in its help, want %v: %s", f.Name, deprecated, !own[f.Name], f.Usage)
		}
	})
}
