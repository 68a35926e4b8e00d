package registry

import (
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestRegistryCATrust(t *testing.T) {
	srv := httptest.NewTLSServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	ref, err := name.ParseReference(host + "/app/tls:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, image(t, "linux", "riscv64", "", nil), remote.WithTransport(srv.Client().Transport)); err != nil {
		t.Fatalf("push: %v", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	tests := []struct {
		name string
		opts Options
		kind string // "" means success
	}{
		{name: "trusted with RegistryCA", opts: Options{RegistryCA: caPEM, AllowedRegistries: []string{host}}},
		{name: "unknown authority without it", opts: Options{AllowedRegistries: []string{host}}, kind: KindUnreachable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, tc.opts)
			got, err := r.Resolve(t.Context(), ref.String(), teamA)
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "riscv64"}}, got, ignoreDigest); diff != "" {
					t.Errorf("Resolve (-want +got):\n%s", diff)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Kind != tc.kind {
				t.Errorf("Resolve error = %v, want kind %s", err, tc.kind)
			}
		})
	}
}

func TestLoadCA(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewTLSServer(nil)
	srv.Close()
	good := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	tests := []struct {
		name    string
		content []byte // nil: file absent
		wantErr string
	}{
		{name: "a certificate", content: good},
		{name: "no certificate", content: []byte("hello"), wantErr: "no PEM certificate"},
		{name: "missing file", wantErr: "read registry CA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := dir + "/" + strings.ReplaceAll(tc.name, " ", "-") + ".pem"
			if tc.content != nil {
				writeFile(t, path, tc.content)
			}
			got, err := LoadCA(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("LoadCA error = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadCA: %v", err)
			}
			if diff := cmp.Diff(tc.content, got); diff != "" {
				t.Errorf("LoadCA (-want +got):\n%s", diff)
			}
		})
	}
}
