package testbed

import (
	"strings"
	"testing"
)

func TestMetricValue(t *testing.T) {
	const text = `# HELP errors_total Errors.
# TYPE errors_total counter
errors_total{kind="unauthorized"} 3
errors_total{kind="timeout"} 2
# HELP up Up.
# TYPE up gauge
up 1
# HELP d Duration.
# TYPE d histogram
d_bucket{le="+Inf"} 1
d_sum 0.5
d_count 1
`
	tests := []struct {
		name      string
		metric    string
		match     map[string]string
		want      float64
		wantFound bool
		wantErr   string
	}{
		{name: "one series", metric: "errors_total", match: map[string]string{"kind": "timeout"}, want: 2, wantFound: true},
		{name: "summed over series", metric: "errors_total", want: 5, wantFound: true},
		{name: "gauge", metric: "up", want: 1, wantFound: true},
		{name: "no matching series", metric: "errors_total", match: map[string]string{"kind": "dns"}},
		{name: "absent", metric: "nothing_total"},
		{name: "histogram refused", metric: "d", wantErr: "is a HISTOGRAM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := MetricValue(text, tc.metric, tc.match)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || found != tc.wantFound {
				t.Errorf("MetricValue = %v, %v; want %v, %v", got, found, tc.want, tc.wantFound)
			}
		})
	}
	if _, _, err := MetricValue("not exposition {{{", "x", nil); err == nil {
		t.Error("MetricValue of malformed text: no error")
	}
}

func TestMetricCount(t *testing.T) {
	const text = `# HELP d Duration.
# TYPE d histogram
d_bucket{op="a",le="+Inf"} 3
d_sum{op="a"} 0.5
d_count{op="a"} 3
d_bucket{op="b",le="+Inf"} 4
d_sum{op="b"} 0.5
d_count{op="b"} 4
# HELP gc Pauses.
# TYPE gc summary
gc{quantile="0.5"} 0.001
gc_sum 0.2
gc_count 17
# HELP up Up.
# TYPE up gauge
up 1
`
	for _, tc := range []struct {
		metric    string
		match     map[string]string
		want      uint64
		wantFound bool
		wantErr   string
	}{
		{metric: "d", want: 7, wantFound: true},
		{metric: "d", match: map[string]string{"op": "b"}, want: 4, wantFound: true},
		{metric: "gc", want: 17, wantFound: true},
		{metric: "absent"},
		{metric: "up", wantErr: "is a GAUGE, want a summary or a histogram"},
	} {
		got, found, err := MetricCount(text, tc.metric, tc.match)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error = %v, want one containing %q", tc.metric, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || found != tc.wantFound {
			t.Errorf("MetricCount(%s, %v) = %d, %v, %v; want %d, %v", tc.metric, tc.match, got, found, err, tc.want, tc.wantFound)
		}
	}
}
