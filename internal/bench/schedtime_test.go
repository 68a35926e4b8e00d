package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// schedMetricsText is kube-scheduler's exposition of its two histograms,
// cut to the series the rows read.
func schedMetricsText(filterSum, scoreSum string, n int) string {
	c := func(v int) string { return string(rune('0' + v)) }
	return `# HELP scheduler_framework_extension_point_duration_seconds [STABLE] Latency for running all plugins of a specific extension point.
# TYPE scheduler_framework_extension_point_duration_seconds histogram
scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",profile="default-scheduler",status="Success",le="+Inf"} ` + c(n) + `
scheduler_framework_extension_point_duration_seconds_sum{extension_point="Filter",profile="default-scheduler",status="Success"} ` + filterSum + `
scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter",profile="default-scheduler",status="Success"} ` + c(n) + `
scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Score",profile="default-scheduler",status="Success",le="+Inf"} ` + c(n) + `
scheduler_framework_extension_point_duration_seconds_sum{extension_point="Score",profile="default-scheduler",status="Success"} ` + scoreSum + `
scheduler_framework_extension_point_duration_seconds_count{extension_point="Score",profile="default-scheduler",status="Success"} ` + c(n) + `
scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Score",profile="default-scheduler",status="Error",le="+Inf"} 1
scheduler_framework_extension_point_duration_seconds_sum{extension_point="Score",profile="default-scheduler",status="Error"} 0.001
scheduler_framework_extension_point_duration_seconds_count{extension_point="Score",profile="default-scheduler",status="Error"} 1
`
}

// TestSchedTimeRows: the windows of two readings are summed per extension
// point over its statuses, and the rows show each kind's mean per call.
func TestSchedTimeRows(t *testing.T) {
	read := func(filterSum, scoreSum string, n int) schedTime {
		t.Helper()
		points, err := histSumsBy(schedMetricsText(filterSum, scoreSum, n), schedExtensionPointMetric, "extension_point")
		if err != nil {
			t.Fatal(err)
		}
		return schedTime{points: points}
	}
	before := read("0.002", "0.004", 2)
	plain := read("0.006", "0.012", 4).since(before)
	if diff := cmp.Diff(HistSums{Sum: 0.008, Count: 2}, plain.points["Score"], cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); diff != "" {
		t.Errorf("Score over the window (-want +got):\n%s", diff)
	}
	times := map[schedKind]schedTime{schedPlain: plain, schedConfined: schedTime{}.plus(plain).plus(plain)}
	rows := schedTimeRows("2 scheduling", []schedKind{schedPlain, schedConfined}, times)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Figure
	}
	head := "the scheduler's own time per call (its metrics), plain / confined: "
	want := map[string]string{
		head + "scheduling algorithm (filter and score)": "0.000 / 0.000 ms",
		head + "Filter": "2.000 / 2.000 ms",
		head + "Score":  "4.000 / 4.000 ms",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestHistSumsByRejects: a metric of another type is an error naming it.
func TestHistSumsByRejects(t *testing.T) {
	_, err := histSumsBy("# TYPE scheduler_framework_extension_point_duration_seconds counter\nscheduler_framework_extension_point_duration_seconds 3\n",
		schedExtensionPointMetric, "extension_point")
	if err == nil {
		t.Fatal("a counter read as a histogram")
	}
}
