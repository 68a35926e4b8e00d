package main

import (
	"bytes"
	"encoding/pem"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

func TestParseArgs(t *testing.T) {
	all := []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"linux", "riscv64"}}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want options
		// wantErr are substrings of the error: the bad value and the fix.
		wantErr []string
	}{
		{
			name: "defaults",
			args: []string{"--repo", "ghcr.io/you", "--tag", "v0.1.0"},
			want: options{
				Repo: "ghcr.io/you", Tag: "v0.1.0", Platforms: all, Apps: defaultApps,
				CABundle: "/etc/ssl/certs/ca-certificates.crt", Source: "https://github.com/isamatch/isamatch",
				Epoch: time.Unix(0, 0).UTC(),
			},
		},
		{
			name: "everything set",
			args: []string{"--repo", "127.0.0.1:5000/isamatch", "--tag", "dev", "--platforms", "linux/riscv64, linux/arm64",
				"--push", "--insecure", "--ca", "ca.pem", "--only", "webhook", "--ca-bundle", "b.crt",
				"--source", "https://example.com/i", "--revision", "abc"},
			env: map[string]string{"SOURCE_DATE_EPOCH": "1700000000"},
			want: options{
				Repo: "127.0.0.1:5000/isamatch", Tag: "dev", Platforms: []Platform{{"linux", "riscv64"}, {"linux", "arm64"}},
				Push: true, Insecure: true, CA: "ca.pem", Apps: defaultApps[1:2], CABundle: "b.crt",
				Source: "https://example.com/i", Revision: "abc", Epoch: time.Unix(1700000000, 0).UTC(),
			},
		},
		{
			name: "oci layout",
			args: []string{"--repo", "r.example/p", "--tag", "t", "--oci-layout", "out", "--only", "labeler,labeler"},
			want: options{
				Repo: "r.example/p", Tag: "t", Platforms: all, OCILayout: "out", Apps: defaultApps[:1],
				CABundle: "/etc/ssl/certs/ca-certificates.crt", Source: "https://github.com/isamatch/isamatch",
				Epoch: time.Unix(0, 0).UTC(),
			},
		},
		{
			name:    "missing repo",
			args:    []string{"--tag", "v1"},
			wantErr: []string{"--repo is required", "--repo ghcr.io/you"},
		},
		{
			name:    "missing tag",
			args:    []string{"--repo", "ghcr.io/you"},
			wantErr: []string{"--tag is required", "--tag v0.1.0"},
		},
		{
			name:    "unknown platform",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "--platforms", "linux/amd64,linux/s390x"},
			wantErr: []string{`"linux/s390x"`, "choose from linux/amd64,linux/arm64,linux/riscv64"},
		},
		{
			name:    "platform without os",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "--platforms", "riscv64"},
			wantErr: []string{`"riscv64"`, "choose from linux/amd64"},
		},
		{
			name:    "platform twice",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "--platforms", "linux/arm64,linux/arm64"},
			wantErr: []string{`"linux/arm64" listed twice`},
		},
		{
			name:    "unknown image",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "--only", "labeler,controller"},
			wantErr: []string{`"controller"`, "choose from labeler, webhook"},
		},
		{
			name:    "push and layout",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "--push", "--oci-layout", "dir"},
			wantErr: []string{"--push and --oci-layout dir", "pass one"},
		},
		{
			name:    "invalid repository",
			args:    []string{"--repo", "ghcr.io/You Are", "--tag", "v1"},
			wantErr: []string{`--repo "ghcr.io/You Are"`, "REGISTRY/PREFIX such as ghcr.io/you"},
		},
		{
			name:    "invalid tag",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1:2"},
			wantErr: []string{`--tag "v1:2"`, "a tag such as v0.1.0"},
		},
		{
			name:    "bad SOURCE_DATE_EPOCH",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1"},
			env:     map[string]string{"SOURCE_DATE_EPOCH": "2026-11-21"},
			wantErr: []string{`SOURCE_DATE_EPOCH="2026-11-21"`, "git log -1 --format=%ct"},
		},
		{
			name:    "positional argument",
			args:    []string{"--repo", "ghcr.io/you", "--tag", "v1", "labeler"},
			wantErr: []string{`unexpected argument "labeler"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("images", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, tc.args, func(k string) string { return tc.env[k] }, defaultApps)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("parseArgs(%q) = %+v, want an error", tc.args, got)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStdout: "usage: go run ./hack/images"},
		{name: "no repo", args: []string{"--tag", "v1"}, wantCode: 2, wantStderr: "images: usage: --repo is required"},
		{name: "bad platform", args: []string{"--repo", "r.example/p", "--tag", "v1", "--platforms", "linux/386"}, wantCode: 2, wantStderr: `unknown platform "linux/386"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tc.wantStdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestTransport(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		ca       string
		insecure bool
		// wantErr is a substring of newTransport's error; wantGetErr of
		// the GET's error ("" = the GET succeeds).
		wantErr, wantGetErr string
	}{
		{name: "system roots only", wantGetErr: "certificate signed by unknown authority"},
		{name: "--ca", ca: caFile},
		{name: "--insecure", insecure: true},
		{name: "--ca not PEM", ca: notPEM, wantErr: "--ca " + notPEM + " holds no PEM certificate"},
		{name: "--ca missing", ca: filepath.Join(dir, "missing.pem"), wantErr: "read --ca"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := newTransport(tc.ca, tc.insecure)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("newTransport: error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err == nil {
				resp.Body.Close()
			}
			switch {
			case tc.wantGetErr == "" && err != nil:
				t.Errorf("GET %s: %v", srv.URL, err)
			case tc.wantGetErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantGetErr)):
				t.Errorf("GET %s: error %v, want one containing %q", srv.URL, err, tc.wantGetErr)
			}
		})
	}
}

func TestSummaryKustomizeBlock(t *testing.T) {
	o := options{Repo: "registry.example.com/team", Tag: "v1", Push: true}
	var results []result
	for i, app := range defaultApps {
		ref, err := o.tag(app)
		if err != nil {
			t.Fatal(err)
		}
		h := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat(string(rune('a'+i)), 64)}
		results = append(results, result{App: app, Ref: ref, Digest: h})
	}
	var out bytes.Buffer
	writeSummary(&out, o, results)
	text := out.String()
	block := text[strings.Index(text, "images:"):]
	block = block[:strings.Index(block, "\n\n")]
	var got struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			Digest  string `json:"digest"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict([]byte(block), &got); err != nil {
		t.Fatalf("the images: block is not valid YAML: %v\n%s", err, block)
	}
	want := []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		Digest  string `json:"digest"`
	}{
		{Name: "ghcr.io/isamatch/labeler", NewName: "registry.example.com/team/labeler", Digest: "sha256:" + strings.Repeat("a", 64)},
		{Name: "ghcr.io/isamatch/webhook", NewName: "registry.example.com/team/webhook", Digest: "sha256:" + strings.Repeat("b", 64)},
		{Name: "ghcr.io/isamatch/rebalancer", NewName: "registry.example.com/team/rebalancer", Digest: "sha256:" + strings.Repeat("c", 64)},
	}
	if diff := cmp.Diff(want, got.Images); diff != "" {
		t.Errorf("kustomize images (-want +got):\n%s", diff)
	}
	// Each pushed image is printed as a reference that parses.
	var refs []string
	for _, line := range strings.Split(text, "\n") {
		if ref, ok := strings.CutPrefix(line, "pushed "); ok {
			refs = append(refs, ref)
			if _, err := name.NewDigest(ref); err != nil {
				t.Errorf("printed reference %q does not parse: %v", ref, err)
			}
		}
	}
	if len(refs) != len(results) {
		t.Errorf("printed %d pushed references, want %d:\n%s", len(refs), len(results), text)
	}
}
