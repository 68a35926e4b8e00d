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

// TestConfigFile: the --config file sets every setting, and its errors
// name the file and the field path.
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
	tests := []parseCase{
		{name: "header only: the defaults", args: []string{"--config", writeConfig(t, "")}, want: func(*options) {}},
		{name: "file only", args: []string{"--config", file}, want: func(o *options) {
			o.port, o.enforcement, o.gateTimeout, o.evictMisplaced = 10443, "warn", 30*time.Second, true
			o.insecureRegistries = stringList{"lab:80", "lab:81"}
		}},
		{name: "a removed flag beside the file", args: []string{"--config", file, "--port=11443"},
			wantErr: "flag --port was removed: set server.port in the file --config names (docs/configuration.md)"},
		{name: "invalid value names the file and the field path", args: []string{"--config", writeConfig(t, "gate:\n  timeout: -1s\n")},
			wantErr: `config.yaml: gate.timeout: Invalid value: "-1s": want a duration in (0, 10m]`},
		{name: "a value checked against another field's", args: []string{"--config", writeConfig(t, "gate:\n  timeout: 30s\n  attempt: 1m\n")},
			wantErr: `config.yaml: gate.attempt: Invalid value: "1m0s": want a duration in (0, 30s] (gate.timeout)`},
		{name: "namespaces may not choose: an empty list", args: []string{"--config", writeConfig(t, "admission:\n  namespaceEnforcement: []\n")},
			want: func(o *options) { o.nsModes = nil }},
		{name: "a namespace mode that is no mode", args: []string{"--config", writeConfig(t, "admission:\n  namespaceEnforcement: [warn, audit]\n")},
			wantErr: `admission.namespaceEnforcement: Invalid value: "warn,audit": "audit" is not a mode`},
		{name: "unknown field", args: []string{"--config", writeConfig(t, "gate:\n  timout: 1s\n")}, wantErr: `unknown field "gate.timout"`},
		{name: "wrong apiVersion", args: []string{"--config", writeRaw(t, "apiVersion: v1\nkind: WebhookConfiguration\n")},
			wantErr: `apiVersion "v1": want config.isamatch.io/v1alpha1`},
		{name: "missing file", args: []string{"--config", "/nonexistent/config.yaml"}, wantErr: "--config: open /nonexistent/config.yaml"},
	}
	checkParse(t, defaults, tests)
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

// writeDropIns writes each body under a WebhookConfiguration header into a
// new directory, as name, and returns the directory.
func writeDropIns(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		data := "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n" + body
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestConfigDir: drop-ins change the fields they name over the --config
// file, in name order, without undoing each other (what the kustomize
// components rely on), and an error names the drop-in that set the bad
// value.
func TestConfigDir(t *testing.T) {
	file := writeConfig(t, "admission:\n  enforcement: warn\nregistry:\n  insecureRegistries: [lab:80]\n")
	components := writeDropIns(t, map[string]string{
		"10-port.yaml":            "server:\n  port: 10443\n",
		"20-pull-secrets.yaml":    "registry:\n  pullSecrets: true\n",
		"30-evict-misplaced.yaml": "misplacement:\n  evict: true\n",
		"90-site.yaml":            "registry:\n  insecureRegistries: [lab:81, lab:82]\n",
		"README.md":               "not read",
	})
	defaults, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := []parseCase{
		{name: "drop-ins over the file", args: []string{"--config", file, "--config-dir", components}, want: func(o *options) {
			o.enforcement = "warn"
			o.port = 10443
			o.pullSecrets, o.evictMisplaced = true, true
			o.insecureRegistries = stringList{"lab:81", "lab:82"}
		}},
		{name: "drop-ins alone, over the defaults", args: []string{"--config-dir", writeDropIns(t, map[string]string{"a.yaml": "gate:\n  timeout: 30s\n"})},
			want: func(o *options) { o.gateTimeout = 30 * time.Second }},
		{name: "later names win", args: []string{"--config-dir", writeDropIns(t, map[string]string{
			"2.yaml": "gate:\n  timeout: 20s\n", "10.yaml": "gate:\n  timeout: 10s\n"})},
			want: func(o *options) { o.gateTimeout = 20 * time.Second }},
		{name: "an invalid value names the drop-in that set it", args: []string{"--config", writeConfig(t, "gate:\n  timeout: 5s\n"),
			"--config-dir", writeDropIns(t, map[string]string{"50-x.yaml": "gate:\n  timeout: -1s\n"})},
			wantErr: `50-x.yaml: gate.timeout: Invalid value: "-1s"`},
		{name: "an unknown field names the drop-in", args: []string{"--config-dir", writeDropIns(t, map[string]string{"50-x.yaml": "gate:\n  timout: 1s\n"})},
			wantErr: `50-x.yaml: decode WebhookConfiguration: unknown field "gate.timout"`},
		{name: "a drop-in of another kind", args: []string{"--config-dir", dirWith(t, "x.yaml", "apiVersion: config.isamatch.io/v1alpha1\nkind: LabelerConfiguration\n")},
			wantErr: `x.yaml: kind "LabelerConfiguration": want WebhookConfiguration`},
		{name: "missing directory", args: []string{"--config-dir", "/nonexistent/config.d"}, wantErr: "--config-dir: open /nonexistent/config.d"},
	}
	checkParse(t, defaults, tests)
}

// dirWith writes one raw file into a new directory and returns it.
func dirWith(t *testing.T, name, data string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// parseCase is parseArgs given args: the options it returns are the
// defaults changed by want, or an error mentioning wantErr.
type parseCase struct {
	name    string
	args    []string
	want    func(o *options)
	wantErr string
}

func checkParse(t *testing.T, defaults options, tests []parseCase) {
	t.Helper()
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
			want.configFile, want.configDir = got.configFile, got.configDir
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
