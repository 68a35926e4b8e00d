package engine

import (
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/isa"
)

// ann is a map of the key/value pairs kv.
func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for k := 0; k+1 < len(kv); k += 2 {
		m[kv[k]] = kv[k+1]
	}
	return m
}

// TestRequestKeyPrecedence: the prefixed annotation wins over the bare
// annotation, which wins over the label; keys that differ from the winner
// are named in a warning.
func TestRequestKeyPrecedence(t *testing.T) {
	tests := []struct {
		name                string
		annotations, labels map[string]string
		wantFrom, wantText  string
		wantQEMUFrom        string
		keys                KeyOptions
		wantWarnings        []string // substrings, in order
	}{
		{name: "prefixed annotation", annotations: ann(isa.RequestAnnotation, "rv64gc"), wantFrom: "annotation " + isa.RequestAnnotation, wantText: "rv64gc"},
		{name: "bare annotation", annotations: ann(isa.BareRequestAnnotation, "rv64gc"), wantFrom: "annotation isa.request", wantText: "rv64gc"},
		{name: "label", labels: ann(isa.RequestLabel, "riscv64"), wantFrom: "label ARCH", wantText: "riscv64"},
		{name: "prefixed and bare agree", annotations: ann(isa.RequestAnnotation, "rv64gc", isa.BareRequestAnnotation, " rv64gc "), wantFrom: "annotation " + isa.RequestAnnotation, wantText: "rv64gc"},
		{
			name:         "prefixed over bare",
			annotations:  ann(isa.RequestAnnotation, "rv64gc", isa.BareRequestAnnotation, "x86-64-v3"),
			wantFrom:     "annotation " + isa.RequestAnnotation,
			wantText:     "rv64gc",
			wantWarnings: []string{`annotation isa.isamatch.io/request "rv64gc" and annotation isa.request "x86-64-v3" differ; annotation isa.isamatch.io/request is used`},
		},
		{
			name:         "prefixed over label",
			annotations:  ann(isa.RequestAnnotation, "rv64gc"),
			labels:       ann(isa.RequestLabel, "amd64"),
			wantFrom:     "annotation " + isa.RequestAnnotation,
			wantText:     "rv64gc",
			wantWarnings: []string{`and label ARCH "amd64" differ`},
		},
		{
			name:         "bare over label",
			annotations:  ann(isa.BareRequestAnnotation, "rv64gc"),
			labels:       ann(isa.RequestLabel, "amd64"),
			wantFrom:     "annotation isa.request",
			wantText:     "rv64gc",
			wantWarnings: []string{`annotation isa.request "rv64gc" and label ARCH "amd64" differ; annotation isa.request is used`},
		},
		{
			name:         "all three set: two warnings",
			annotations:  ann(isa.RequestAnnotation, "rv64gc", isa.BareRequestAnnotation, "rv64i"),
			labels:       ann(isa.RequestLabel, "amd64"),
			wantFrom:     "annotation " + isa.RequestAnnotation,
			wantText:     "rv64gc",
			wantWarnings: []string{`annotation isa.request "rv64i"`, `label ARCH "amd64"`},
		},
		{
			name:         "qemu: prefixed over label",
			annotations:  ann(isa.QEMUAnnotation, "rv64gcv"),
			labels:       ann(isa.QEMULabel, "rv64gc"),
			wantQEMUFrom: "annotation " + isa.QEMUAnnotation,
			wantWarnings: []string{`annotation isa.isamatch.io/qemu "rv64gcv" and label QEMU "rv64gc" differ`},
		},
		{
			name:        "bare keys ignored: the paper's keys are someone else's",
			annotations: ann(isa.BareRequestAnnotation, "not-an-isa", isa.BareQEMUAnnotation, "rv64gcv"),
			labels:      ann(isa.RequestLabel, "x86", isa.QEMULabel, "yes"),
			keys:        KeyOptions{IgnoreBareKeys: true},
		},
		{
			name:        "bare keys ignored: the prefixed key still counts, with no warning",
			annotations: ann(isa.RequestAnnotation, "rv64gc", isa.BareRequestAnnotation, "amd64"),
			labels:      ann(isa.RequestLabel, "arm64"),
			keys:        KeyOptions{IgnoreBareKeys: true},
			wantFrom:    "annotation " + isa.RequestAnnotation,
			wantText:    "rv64gc",
		},
		{
			name:         "qemu: bare over label",
			annotations:  ann(isa.BareQEMUAnnotation, "rv64gcv"),
			labels:       ann(isa.QEMULabel, "rv64gcv"),
			wantQEMUFrom: "annotation isa.qemu",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, warnings, msg := ReadRequests(tc.annotations, tc.labels, tc.keys)
			if msg != "" {
				t.Fatalf("denied: %s", msg)
			}
			if in.RequestFrom != tc.wantFrom || in.RequestText != tc.wantText || in.QEMUFrom != tc.wantQEMUFrom {
				t.Errorf("request from %q %q, qemu from %q; want %q %q, %q", in.RequestFrom, in.RequestText, in.QEMUFrom, tc.wantFrom, tc.wantText, tc.wantQEMUFrom)
			}
			if len(warnings) != len(tc.wantWarnings) {
				t.Fatalf("warnings = %q, want %d matching %q", warnings, len(tc.wantWarnings), tc.wantWarnings)
			}
			for k, s := range tc.wantWarnings {
				if !strings.Contains(warnings[k].Text, s) {
					t.Errorf("warning %d = %q, want it to contain %q", k, warnings[k].Text, s)
				}
			}
		})
	}
}
