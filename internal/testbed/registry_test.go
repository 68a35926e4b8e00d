package testbed

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestHTPasswd(t *testing.T) {
	line, err := HTPasswd("alice", "s3cret")
	if err != nil {
		t.Fatalf("HTPasswd: %v", err)
	}
	user, hash, ok := strings.Cut(strings.TrimSuffix(string(line), "\n"), ":")
	if !ok || user != "alice" {
		t.Fatalf("HTPasswd line = %q, want alice:<bcrypt>", line)
	}
	cases := []struct {
		name     string
		password string
		wantOK   bool
	}{
		{name: "right password", password: "s3cret", wantOK: true},
		{name: "wrong password", password: "s3cret!", wantOK: false},
		{name: "empty password", password: "", wantOK: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(tc.password))
			if got := err == nil; got != tc.wantOK {
				t.Errorf("password %q accepted = %v, want %v", tc.password, got, tc.wantOK)
			}
		})
	}
}

func TestServingCert(t *testing.T) {
	caPEM, certPEM, keyPEM, err := newServingCert([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("newServingCert: %v", err)
	}
	if blk, _ := pem.Decode(keyPEM); blk == nil || blk.Type != "EC PRIVATE KEY" {
		t.Fatalf("key PEM does not hold an EC private key")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("CA PEM does not parse")
	}
	blk, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("parse serving cert: %v", err)
	}
	cases := []struct {
		name   string
		host   string
		wantOK bool
	}{
		{name: "loopback IP", host: "127.0.0.1", wantOK: true},
		{name: "localhost", host: "localhost", wantOK: true},
		{name: "other name", host: "registry.example", wantOK: false},
		{name: "other IP", host: "127.0.0.2", wantOK: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cert.Verify(x509.VerifyOptions{DNSName: tc.host, Roots: pool})
			if got := err == nil; got != tc.wantOK {
				t.Errorf("verify for %s: ok = %v (err %v), want %v", tc.host, got, err, tc.wantOK)
			}
		})
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: x509.NewCertPool()}); err == nil {
		t.Errorf("serving cert verifies without its CA")
	}
}

func TestRegistryConfig(t *testing.T) {
	cfg := registryConfig("/tmp/r", "127.0.0.1:5555")
	for _, want := range []string{
		"addr: 127.0.0.1:5555",
		"rootdirectory: /tmp/r/data",
		"certificate: /tmp/r/tls.crt",
		"key: /tmp/r/tls.key",
		"path: /tmp/r/htpasswd",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("registry config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestAssetsDir(t *testing.T) {
	full := t.TempDir()
	for _, b := range []string{"kube-apiserver", "etcd", "kube-scheduler"} {
		writeExec(t, filepath.Join(full, b), 0o755)
	}
	noSched := t.TempDir()
	writeExec(t, filepath.Join(noSched, "kube-apiserver"), 0o755)
	writeExec(t, filepath.Join(noSched, "etcd"), 0o755)
	notExec := t.TempDir()
	for _, b := range []string{"kube-apiserver", "etcd", "kube-scheduler"} {
		writeExec(t, filepath.Join(notExec, b), 0o644)
	}
	cases := []struct {
		name    string
		env     string
		wantErr string
	}{
		{name: "unset", env: "", wantErr: "KUBEBUILDER_ASSETS is not set: run `make test`"},
		{name: "complete", env: full},
		{name: "missing scheduler", env: noSched, wantErr: "has no executable kube-scheduler"},
		{name: "not executable", env: notExec, wantErr: "has no executable kube-apiserver"},
		{name: "missing dir", env: filepath.Join(full, "nope"), wantErr: "hack/controlplane.sh"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(AssetsEnv, tc.env)
			got, err := AssetsDir()
			if tc.wantErr == "" {
				if err != nil || got != tc.env {
					t.Errorf("AssetsDir() = %q, %v; want %q, nil", got, err, tc.env)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("AssetsDir() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func writeExec(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

// inProcessRegistry serves go-containerregistry's registry over TLS behind
// basic auth and describes it as a *Registry.
func inProcessRegistry(t *testing.T) *Registry {
	t.Helper()
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &Registry{
		Host:     strings.TrimPrefix(srv.URL, "https://"),
		CAPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		Username: "alice",
		Password: "pw",
	}
}

func TestPushIndex(t *testing.T) {
	reg := inProcessRegistry(t)
	platforms := []Platform{
		{Arch: "riscv64", Variant: "rva23u64", Labels: map[string]string{isa.BareImageRequestLabel: "rva23u64"}},
		{Arch: "amd64", Variant: "v3"},
		{OS: "linux", Arch: "arm64", Features: []string{"sve2"}},
	}
	digest, err := PushIndex(t.Context(), reg, "demo/app", "v1", platforms)
	if err != nil {
		t.Fatalf("PushIndex: %v", err)
	}
	ref, err := name.ParseReference(reg.Ref("demo/app", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, reg.RemoteOptions(t.Context())...)
	if err != nil {
		t.Fatalf("read index back: %v", err)
	}
	if got, _ := idx.Digest(); got != digest {
		t.Errorf("index digest = %s, PushIndex returned %s", got, digest)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Descriptor v1.Platform
		Config     v1.Platform
		Labels     map[string]string
	}
	var got []seen
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatalf("image %s: %v", d.Digest, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, seen{
			Descriptor: *d.Platform,
			Config:     v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant},
			Labels:     cf.Config.Labels,
		})
	}
	want := []seen{
		{Descriptor: v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"},
			Config: v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"},
			Labels: map[string]string{isa.BareImageRequestLabel: "rva23u64"}},
		{Descriptor: v1.Platform{OS: "linux", Architecture: "amd64", Variant: "v3"},
			Config: v1.Platform{OS: "linux", Architecture: "amd64", Variant: "v3"}},
		{Descriptor: v1.Platform{OS: "linux", Architecture: "arm64", Features: []string{"sve2"}},
			Config: v1.Platform{OS: "linux", Architecture: "arm64"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pushed index (-want +got):\n%s", diff)
	}

	bad := *reg
	bad.Password = "wrong"
	if _, err := PushIndex(t.Context(), &bad, "demo/app", "v2", platforms); err == nil {
		t.Errorf("PushIndex with a wrong password succeeded")
	}
}

func TestPushImage(t *testing.T) {
	reg := inProcessRegistry(t)
	p := Platform{Arch: "riscv64", Labels: map[string]string{"k": "v"}}
	digest, err := PushImage(t.Context(), reg, "single", "latest", p)
	if err != nil {
		t.Fatalf("PushImage: %v", err)
	}
	ref, _ := name.ParseReference(reg.Ref("single", "latest"))
	img, err := remote.Image(ref, reg.RemoteOptions(t.Context())...)
	if err != nil {
		t.Fatalf("read image back: %v", err)
	}
	if got, _ := img.Digest(); got != digest {
		t.Errorf("image digest = %s, PushImage returned %s", got, digest)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := Platform{OS: cf.OS, Arch: cf.Architecture, Variant: cf.Variant, Labels: cf.Config.Labels}
	want := Platform{OS: "linux", Arch: "riscv64", Labels: map[string]string{"k": "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pushed image config (-want +got):\n%s", diff)
	}
}

func TestIndexNoPlatforms(t *testing.T) {
	if _, err := Index(nil); err == nil {
		t.Errorf("Index(nil) succeeded, want an error")
	}
}

func TestProcess(t *testing.T) {
	cases := []struct {
		name     string
		script   string
		wantExit bool
		wantLog  string
	}{
		{name: "exits with output", script: "echo hello from child; exit 3", wantExit: true, wantLog: "hello from child"},
		{name: "keeps running", script: "echo started; sleep 60", wantExit: false, wantLog: "started"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "child.log")
			p, err := StartProcess("child", "/bin/sh", []string{"-c", tc.script}, nil, logPath)
			if err != nil {
				t.Fatalf("StartProcess: %v", err)
			}
			t.Cleanup(func() { _ = p.Stop(time.Second) })
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(p.LogTail(5), tc.wantLog) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			if exited, _ := p.Exited(); exited != tc.wantExit {
				t.Errorf("Exited = %v, want %v", exited, tc.wantExit)
			}
			if got := p.LogTail(5); !strings.Contains(got, tc.wantLog) {
				t.Errorf("LogTail = %q, want it to contain %q", got, tc.wantLog)
			}
			err = p.WaitHTTP(t.Context(), "http://127.0.0.1:1/", nil, 300*time.Millisecond, func(int) bool { return true })
			if err == nil {
				t.Errorf("WaitHTTP on a closed port succeeded")
			} else if tc.wantExit && !strings.Contains(err.Error(), "exited while starting") {
				t.Errorf("WaitHTTP error = %v, want it to say the process exited", err)
			}
			stopErr := p.Stop(time.Second)
			if tc.wantExit && stopErr == nil {
				t.Errorf("Stop after a crash returned nil, want the exit error")
			}
			if !tc.wantExit && stopErr != nil {
				t.Errorf("Stop = %v, want nil", stopErr)
			}
			if exited, _ := p.Exited(); !exited {
				t.Errorf("process still running after Stop")
			}
		})
	}
}
