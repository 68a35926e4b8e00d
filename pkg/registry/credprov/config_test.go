package credprov

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakePluginDir returns a bin dir holding an executable named name (a
// script never run by these tests).
func fakePluginDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCredentialProviderConfig(t *testing.T) {
	const header = "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n"
	const good = `  - name: ecr-credential-provider
    matchImages: ["*.dkr.ecr.*.amazonaws.com"]
    defaultCacheDuration: 12h
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args: [get-credentials]
    env: [{name: AWS_PROFILE, value: registry}]
`
	tests := []struct {
		name    string
		config  string
		bins    []string
		wantErr string // a part of the error; "" means valid
		want    []credentialProvider
	}{
		{name: "valid", config: header + good, bins: []string{"ecr-credential-provider"}},
		{name: "unknown field", config: header + strings.Replace(good, "matchImages", "matchImage", 1),
			bins: []string{"ecr-credential-provider"}, wantErr: `unknown field "matchImage"`},
		{name: "wrong kind", config: strings.Replace(header, "CredentialProviderConfig", "KubeletConfiguration", 1) + good,
			bins: []string{"ecr-credential-provider"}, wantErr: `kind "KubeletConfiguration"`},
		{name: "wrong config apiVersion", config: strings.Replace(header, "kubelet.config.k8s.io/v1", "v1", 1) + good,
			bins: []string{"ecr-credential-provider"}, wantErr: `apiVersion "v1", want one of kubelet.config.k8s.io/v1`},
		{name: "no providers", config: header + "  []\n", wantErr: "no providers"},
		{name: "path in name", config: header + strings.Replace(good, "name: ecr-credential-provider", "name: ../bin/sh", 1),
			wantErr: `providers[0].name "../bin/sh": want a plain file name`},
		{name: "dot name", config: header + strings.Replace(good, "name: ecr-credential-provider", `name: ".."`, 1),
			wantErr: `providers[0].name ".."`},
		{name: "missing binary", config: header + good, wantErr: `providers[0].name "ecr-credential-provider": no executable`},
		{name: "duplicate name", config: header + good + good, bins: []string{"ecr-credential-provider"},
			wantErr: `providers[1].name "ecr-credential-provider": already the name of`},
		{name: "plugin apiVersion", config: header + strings.Replace(good, "credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v2", 1),
			bins: []string{"ecr-credential-provider"}, wantErr: `providers[0].apiVersion "credentialprovider.kubelet.k8s.io/v2"`},
		{name: "no matchImages", config: header + strings.Replace(good, `matchImages: ["*.dkr.ecr.*.amazonaws.com"]`, "matchImages: []", 1),
			bins: []string{"ecr-credential-provider"}, wantErr: "providers[0].matchImages is empty"},
		{name: "bad matchImages glob", config: header + strings.Replace(good, `"*.dkr.ecr.*.amazonaws.com"`, `"[.example"`, 1),
			bins: []string{"ecr-credential-provider"}, wantErr: `providers[0].matchImages[0] "[.example"`},
		{name: "no defaultCacheDuration", config: header + strings.Replace(good, "    defaultCacheDuration: 12h\n", "", 1),
			bins: []string{"ecr-credential-provider"}, wantErr: "providers[0].defaultCacheDuration is missing"},
		{name: "negative defaultCacheDuration", config: header + strings.Replace(good, "12h", "-1m", 1),
			bins: []string{"ecr-credential-provider"}, wantErr: "providers[0].defaultCacheDuration -1m0s"},
		{name: "tokenAttributes", config: header + good + "    tokenAttributes: {serviceAccountTokenAudience: x, cacheType: Token, requireServiceAccount: true}\n",
			bins: []string{"ecr-credential-provider"}, wantErr: "providers[0].tokenAttributes"},
		{name: "env name", config: header + strings.Replace(good, "name: AWS_PROFILE", `name: "A=B"`, 1),
			bins: []string{"ecr-credential-provider"}, wantErr: `providers[0].env[0].name "A=B"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakePluginDir(t, tc.bins...)
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, cfg, []byte(tc.config))
			got, err := New(Options{ConfigPath: cfg, BinDir: bin})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			want := []credentialProvider{{
				name: "ecr-credential-provider", path: filepath.Join(bin, "ecr-credential-provider"),
				apiVersion: "credentialprovider.kubelet.k8s.io/v1", matchImages: []string{"*.dkr.ecr.*.amazonaws.com"},
				defaultCache: 12 * 3600e9, args: []string{"get-credentials"}, env: []string{"AWS_PROFILE=registry"},
			}}
			if diff := cmp.Diff(want, got.providers, cmp.AllowUnexported(credentialProvider{})); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}

// A directory of configs is read in lexical order, as the kubelet reads
// it; a provider name must be unique across the files.
func TestCredentialProviderConfigDir(t *testing.T) {
	provider := func(name string) string {
		return "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n  - name: " + name +
			"\n    matchImages: [registry.example]\n    defaultCacheDuration: 1m\n    apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
	}
	bin := fakePluginDir(t, "a", "b")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "20-b.yaml"), []byte(provider("b")))
	writeFile(t, filepath.Join(dir, "10-a.json.yml"), []byte(provider("a")))
	writeFile(t, filepath.Join(dir, "README"), []byte("not a config"))
	k, err := New(Options{ConfigPath: dir, BinDir: bin})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var names []string
	for _, p := range k.providers {
		names = append(names, p.name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" {
		t.Errorf("provider order (-want +got):\n%s", diff)
	}
	writeFile(t, filepath.Join(dir, "30-a-again.yaml"), []byte(provider("a")))
	if _, err := New(Options{ConfigPath: dir, BinDir: bin}); err == nil || !strings.Contains(err.Error(), `.name "a": already the name of`) {
		t.Errorf("duplicate across files: error = %v, want one naming the duplicate", err)
	}
}
