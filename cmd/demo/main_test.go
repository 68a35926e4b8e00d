package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/internal/experiment"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{"defaults", nil, options{seed: 1, tasks: 100, timeout: 10 * time.Minute}, false},
		{"seed, scenarios and pods", []string{"-seed=7", "-scenarios=base,qemu", "-pods"},
			options{seed: 7, tasks: 100, scenarios: []string{"base", "qemu"}, listPods: true, timeout: 10 * time.Minute}, false},
		{"rebalancing scene alone", []string{"-scenarios=rebalance"},
			options{seed: 1, tasks: 100, scenarios: []string{"rebalance"}, timeout: 10 * time.Minute}, false},
		{"both scenes", []string{"-scenarios=leafgroup,rebalance"},
			options{seed: 1, tasks: 100, scenarios: []string{"leafgroup", "rebalance"}, timeout: 10 * time.Minute}, false},
		{"unknown scenario", []string{"-scenarios=base,nope"}, options{}, true},
		{"no tasks", []string{"-tasks=0"}, options{}, true},
		{"too many tasks", []string{"-tasks=1001"}, options{}, true},
		{"positional argument", []string{"extra"}, options{}, true},
		{"negative timeout", []string{"-timeout=-1s"}, options{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("demo", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseArgs(%q) error = %v, want error %v", tc.args, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); !tc.wantErr && diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	tests := []struct {
		name      string
		scenarios []string
		want      map[string]bool
	}{
		{"default runs everything", nil, map[string]bool{"base": true, "qemu": true, rebalanceScene: true, leafScene: true}},
		{"scene alone", []string{rebalanceScene}, map[string]bool{"base": false, "qemu": false, rebalanceScene: true, leafScene: false}},
		{"paper alone", []string{"base"}, map[string]bool{"base": true, "qemu": false, rebalanceScene: false, leafScene: false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options{scenarios: tc.scenarios}
			got := map[string]bool{}
			for name := range tc.want {
				got[name] = o.selected(name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	sc := experiment.Scenario{Name: "ext-image"}
	tests := []struct {
		name string
		res  experiment.Result
		want int
	}{
		{"all correct and best fit", experiment.Result{Pods: 100, Correct: 100, Eligible: 100, BestFit: 100}, 0},
		{"one wrong", experiment.Result{Pods: 100, Correct: 99, Eligible: 100, BestFit: 99, Wrong: []string{"task-001(RV64IMFD)->node2"}}, 2},
		{"one off best fit", experiment.Result{Pods: 100, Correct: 100, Eligible: 100, BestFit: 99}, 1},
		{"stock figures do not count", experiment.Result{Pods: 100, Correct: 100, Eligible: 90, BestFit: 90}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := experiment.Row{Scenario: sc, Stock: experiment.Result{Pods: 100, Correct: 40}, Isamatch: tc.res}
			if got := Verdict(row); len(got) != tc.want {
				t.Errorf("Verdict = %q, want %d failures", got, tc.want)
			}
		})
	}
}

func TestWhereWent(t *testing.T) {
	placements := []experiment.Placement{
		{Task: experiment.Task{Name: "task-000", Need: "RV64IMFD"}, Node: "node3"},
		{Task: experiment.Task{Name: "task-001", Need: "RV64IMFD"}, Node: "node3"},
		{Task: experiment.Task{Name: "task-002", Need: "RV64IMFDV"}, Node: "node5"},
		{Task: experiment.Task{Name: "task-003", Need: "RV64IMFDV"}, Node: ""},
	}
	got := whereWent("ext-hint", experiment.Result{Isamatch: true}, placements, true)
	want := []string{
		"ext-hint  isamatch RV64IMFD   node3=2",
		"ext-hint  isamatch RV64IMFDV  node5=1 unscheduled=1",
		"ext-hint  isamatch pods: task-000(RV64IMFD)->node3 task-001(RV64IMFD)->node3 task-002(RV64IMFDV)->node5 task-003(RV64IMFDV)->-",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("whereWent (-want +got):\n%s", diff)
	}
}
