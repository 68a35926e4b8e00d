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

	"github.com/isamatch/isamatch/internal/bench"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string // substring; "" means success
		check   func(t *testing.T, o bench.Options)
	}{
		{name: "defaults", check: func(t *testing.T, o bench.Options) {
			if diff := cmp.Diff([]int{3, 1000, 500}, []int{o.Runs, o.Pods, o.Nodes}); diff != "" {
				t.Errorf("runs, pods, nodes (-want +got):\n%s", diff)
			}
			if o.OpenRate != 100 || o.OpenDuration != 10*time.Second {
				t.Errorf("open loop %g pods/s for %s, want 100 for 10s", o.OpenRate, o.OpenDuration)
			}
		}},
		{name: "more runs", args: []string{"--runs=5", "--pods=200"}, check: func(t *testing.T, o bench.Options) {
			if o.Runs != 5 || o.Pods != 200 {
				t.Errorf("runs, pods = %d, %d; want 5, 200", o.Runs, o.Pods)
			}
		}},
		{name: "open loop", args: []string{"--open-rate=50", "--open-duration=30s"}, check: func(t *testing.T, o bench.Options) {
			if o.OpenRate != 50 || o.OpenDuration != 30*time.Second {
				t.Errorf("open loop %g pods/s for %s, want 50 for 30s", o.OpenRate, o.OpenDuration)
			}
		}},
		{name: "webhook drop-ins", args: []string{"--webhook-config-dir=" + dropIns(t, "events:\n  pods: false\n")}, check: func(t *testing.T, o bench.Options) {
			if o.WebhookConfigDir == "" {
				t.Error("WebhookConfigDir empty")
			}
		}},
		{name: "webhook drop-in with an unknown field", args: []string{"--webhook-config-dir=" + dropIns(t, "events:\n  pod: false\n")},
			wantErr: `unknown field "events.pod"`},
		{name: "webhook drop-in with a bad value", args: []string{"--webhook-config-dir=" + dropIns(t, "gate:\n  workers: 0\n")},
			wantErr: "gate.workers: Invalid value: 0"},
		{name: "webhook drop-in directory empty", args: []string{"--webhook-config-dir=" + t.TempDir()}, wantErr: "holds no *.yaml"},
		{name: "open rate zero", args: []string{"--open-rate=0"}, wantErr: "--open-rate=0: want pods per second in (0, 5000]"},
		{name: "open rate NaN", args: []string{"--open-rate=NaN"}, wantErr: "--open-rate=NaN"},
		{name: "open duration negative", args: []string{"--open-duration=-1s"}, wantErr: "--open-duration=-1s: want a positive duration"},
		{name: "open loop too many pods", args: []string{"--open-rate=5000", "--open-duration=1h"}, wantErr: "= 18000000 pods: want 1..100000"},
		{name: "open loop under one pod", args: []string{"--open-rate=1", "--open-duration=100ms"}, wantErr: "= 0 pods: want 1..100000"},
		{name: "too few runs", args: []string{"--runs=2"}, wantErr: "--runs=2: want at least 3"},
		{name: "no pods", args: []string{"--pods=0"}, wantErr: "--pods=0"},
		{name: "too many groups", args: []string{"--inventory-groups=300"}, wantErr: "--inventory-groups=300: want 20..265"},
		{name: "inventory below the cluster", args: []string{"--inventory-nodes=100"}, wantErr: "--inventory-nodes=100 is below --nodes=500"},
		{name: "unknown section", args: []string{"--only=admission,nope"}, wantErr: `unknown section "nope"`},
		{name: "positional argument", args: []string{"extra"}, wantErr: "unexpected arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("bench", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, append([]string{"--quiet"}, tc.args...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Progress != nil {
				t.Error("--quiet left a progress writer")
			}
			tc.check(t, o)
		})
	}
}

func TestRunWithoutAssets(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	var stderr strings.Builder
	if code := run([]string{"--quiet"}, io.Discard, &stderr); code != exitUsage {
		t.Errorf("exit code = %d, want %d (usage)", code, exitUsage)
	}
	if !strings.Contains(stderr.String(), "KUBEBUILDER_ASSETS is not set") {
		t.Errorf("stderr = %q, want it to name KUBEBUILDER_ASSETS", stderr.String())
	}
}

func TestParseScaleArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{args: nil},
		{args: []string{"--nodes=1000", "--pods=10000", "--batches=4"}},
		{args: []string{"--nodes=50"}, wantErr: "--nodes=50: want 100..20000"},
		{args: []string{"--pods=1000", "--batches=3"}, wantErr: "--batches=3: want a positive divisor of --pods=1000"},
		{args: []string{"--join-rate=0"}, wantErr: "--join-rate=0"},
		{args: []string{"extra"}, wantErr: "takes flags only"},
	} {
		fs := flag.NewFlagSet("bench scale", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o, err := parseScaleArgs(fs, tc.args)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
			t.Errorf("parseScaleArgs(%q) = %q, want %q", tc.args, got, tc.wantErr)
		}
		if tc.args == nil && (o.Nodes != 5000 || o.Pods != 50000) {
			t.Errorf("defaults: %d nodes, %d pods; want 5000 and 50000", o.Nodes, o.Pods)
		}
	}
}

// dropIns writes body under a WebhookConfiguration header as the one
// drop-in of a new directory and returns the directory.
func dropIns(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	data := "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n" + body
	if err := os.WriteFile(filepath.Join(dir, "50-bench.yaml"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
