package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewJSON(t *testing.T) {
	tests := []struct {
		name      string
		verbosity int
		want      []map[string]any // without "time"
	}{
		{
			name: "v0 drops V(1)",
			want: []map[string]any{
				{"level": "info", "msg": "denied", "logger": "webhook", "pod": "ns/p"},
				{"level": "error", "msg": "resolve failed", "logger": "webhook", "err": "timeout", "image": "x"},
			},
		},
		{
			name:      "v1 keeps V(1) as debug",
			verbosity: 1,
			want: []map[string]any{
				{"level": "info", "msg": "denied", "logger": "webhook", "pod": "ns/p"},
				{"level": "debug", "msg": "decided", "logger": "webhook", "terms": float64(2)},
				{"level": "error", "msg": "resolve failed", "logger": "webhook", "err": "timeout", "image": "x"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(FormatJSON, tc.verbosity, &buf)
			if err != nil {
				t.Fatal(err)
			}
			log = log.WithName("webhook")
			log.Info("denied", "pod", "ns/p")
			log.V(1).Info("decided", "terms", 2)
			log.Error(errors.New("timeout"), "resolve failed", "image", "x")
			var got []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				m := map[string]any{}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("line %q is not JSON: %v", line, err)
				}
				if _, ok := m["time"]; !ok {
					t.Errorf("line %q has no time", line)
				}
				delete(m, "time")
				got = append(got, m)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewFormats(t *testing.T) {
	for _, f := range []string{FormatText, FormatJSON} {
		if _, err := New(f, 0, &bytes.Buffer{}); err != nil {
			t.Errorf("New(%q): %v", f, err)
		}
	}
	if _, err := New("yaml", 0, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `"yaml"`) {
		t.Errorf("New(yaml) error = %v, want one naming the value", err)
	}
}
