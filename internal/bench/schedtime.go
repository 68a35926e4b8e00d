package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The scheduler's histograms of its own time: the scheduling algorithm
// (filtering and scoring) per attempt, and each extension point per call.
const (
	schedAlgorithmMetric      = "scheduler_scheduling_algorithm_duration_seconds"
	schedExtensionPointMetric = "scheduler_framework_extension_point_duration_seconds"
)

// schedTime is the scheduler's own time, as its metrics count it: the
// algorithm's, and each extension point's by name.
type schedTime struct {
	algorithm HistSums
	points    map[string]HistSums
}

// readSchedTime reads the scheduler's time so far from its metrics.
func readSchedTime(ctx context.Context, e *Env) (schedTime, error) {
	text, err := e.CP.SchedulerMetrics(ctx)
	if err != nil {
		return schedTime{}, err
	}
	alg, err := ParseHistSums(strings.NewReader(text), schedAlgorithmMetric, nil)
	if err != nil {
		return schedTime{}, err
	}
	points, err := histSumsBy(text, schedExtensionPointMetric, "extension_point")
	if err != nil {
		return schedTime{}, err
	}
	return schedTime{algorithm: alg, points: points}, nil
}

// since is what t added over an earlier reading.
func (t schedTime) since(before schedTime) schedTime {
	d := schedTime{algorithm: t.algorithm.Sub(before.algorithm), points: map[string]HistSums{}}
	for k, v := range t.points {
		d.points[k] = v.Sub(before.points[k])
	}
	return d
}

// plus is t and another window together.
func (t schedTime) plus(d schedTime) schedTime {
	s := schedTime{algorithm: t.algorithm.Add(d.algorithm), points: map[string]HistSums{}}
	for k, v := range t.points {
		s.points[k] = v
	}
	for k, v := range d.points {
		s.points[k] = s.points[k].Add(v)
	}
	return s
}

// histSumsBy sums histogram name's _sum and _count per value of label.
func histSumsBy(text, name, label string) (map[string]HistSums, error) {
	f, err := histogramFamily(strings.NewReader(text), name)
	if err != nil {
		return nil, err
	}
	out := map[string]HistSums{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = out[l.GetValue()].Add(HistSums{Sum: m.GetHistogram().GetSampleSum(), Count: float64(m.GetHistogram().GetSampleCount())})
			}
		}
	}
	return out, nil
}

// schedTimeRows are the scheduler's mean time per call, kind beside kind:
// the algorithm's, then each extension point's it called for every kind.
func schedTimeRows(sec string, kinds []schedKind, times map[schedKind]schedTime) []Row {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	figure := func(mean func(schedTime) HistSums) string {
		ms := make([]string, len(kinds))
		for i, k := range kinds {
			ms[i] = fmt.Sprintf("%.3f", mean(times[k]).Mean()*1000)
		}
		return strings.Join(ms, " / ") + " ms"
	}
	head := "the scheduler's own time per call (its metrics), " + strings.Join(names, " / ") + ": "
	rows := []Row{{Section: sec, Name: head + "scheduling algorithm (filter and score)", Verdict: Info,
		Figure: figure(func(t schedTime) HistSums { return t.algorithm })}}
	var points []string
	for p := range times[kinds[0]].points {
		if !slices.ContainsFunc(kinds, func(k schedKind) bool { return times[k].points[p].Count == 0 }) {
			points = append(points, p)
		}
	}
	slices.Sort(points)
	for _, p := range points {
		rows = append(rows, Row{Section: sec, Name: head + p, Verdict: Info,
			Figure: figure(func(t schedTime) HistSums { return t.points[p] })})
	}
	return rows
}
