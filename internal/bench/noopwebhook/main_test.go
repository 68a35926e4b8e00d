package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestParseArgs(t *testing.T) {
	base := []string{"--kubeconfig=/k", "--cert-dir=/c"}
	cases := []struct {
		name    string
		args    []string
		want    options
		wantErr string // substring; "" means success
	}{
		{name: "defaults", args: base, want: options{kubeconfig: "/k", certDir: "/c", port: 9443, metricsAddr: "0", probeAddr: ":8081"}},
		{name: "all flags", args: append(base, "--port=8443", "--metrics-bind-address=127.0.0.1:1", "--health-probe-bind-address=127.0.0.1:2", "--enable-http2"),
			want: options{kubeconfig: "/k", certDir: "/c", port: 8443, metricsAddr: "127.0.0.1:1", probeAddr: "127.0.0.1:2", enableHTTP2: true}},
		{name: "no kubeconfig", args: []string{"--cert-dir=/c"}, wantErr: "--kubeconfig is empty"},
		{name: "no cert dir", args: []string{"--kubeconfig=/k"}, wantErr: "--cert-dir is empty"},
		{name: "bad port", args: append(base, "--port=70000"), wantErr: "--port 70000: want 1..65535"},
		{name: "positional argument", args: append(base, "extra"), wantErr: "unexpected arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("noopwebhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllowChangesNothing(t *testing.T) {
	resp := allow(t.Context(), admission.Request{})
	if !resp.Allowed || len(resp.Patches) != 0 || resp.Patch != nil || resp.PatchType != nil {
		t.Errorf("allow = %+v, want allowed with no patch", resp)
	}
}
