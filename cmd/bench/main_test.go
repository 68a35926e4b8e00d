package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string // substring; "" means success
		check   func(t *testing.T, runs, pods, nodes int)
	}{
		{name: "defaults", check: func(t *testing.T, runs, pods, nodes int) {
			if diff := cmp.Diff([]int{3, 1000, 500}, []int{runs, pods, nodes}); diff != "" {
				t.Errorf("runs, pods, nodes (-want +got):\n%s", diff)
			}
		}},
		{name: "more runs", args: []string{"--runs=5", "--pods=200"}, check: func(t *testing.T, runs, pods, _ int) {
			if runs != 5 || pods != 200 {
				t.Errorf("runs, pods = %d, %d; want 5, 200", runs, pods)
			}
		}},
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
			tc.check(t, o.Runs, o.Pods, o.Nodes)
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
