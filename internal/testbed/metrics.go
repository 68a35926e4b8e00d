package testbed

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricValue reads Prometheus text exposition and returns the value of the
// counter or gauge name on the series whose labels include every pair of
// match, summed over the series that do; found is false when no series
// matches.
func MetricValue(text, name string, match map[string]string) (value float64, found bool, err error) {
	err = eachSeries(text, name, match, func(t dto.MetricType, m *dto.Metric) error {
		switch t {
		case dto.MetricType_COUNTER:
			value += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			value += m.GetGauge().GetValue()
		default:
			return fmt.Errorf("metric %s is a %s, want a counter or a gauge", name, t)
		}
		found = true
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return value, found, nil
}

// MetricCount is MetricValue for a summary or a histogram: how many
// observations name has on the series whose labels include every pair of
// match, summed.
func MetricCount(text, name string, match map[string]string) (count uint64, found bool, err error) {
	err = eachSeries(text, name, match, func(t dto.MetricType, m *dto.Metric) error {
		switch t {
		case dto.MetricType_SUMMARY:
			count += m.GetSummary().GetSampleCount()
		case dto.MetricType_HISTOGRAM:
			count += m.GetHistogram().GetSampleCount()
		default:
			return fmt.Errorf("metric %s is a %s, want a summary or a histogram", name, t)
		}
		found = true
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return count, found, nil
}

// eachSeries calls f with each series of name in text whose labels
// include every pair of match, until f returns an error.
func eachSeries(text, name string, match map[string]string, f func(dto.MetricType, *dto.Metric) error) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("parse metrics: %w", err)
	}
	fam, ok := families[name]
	if !ok {
		return nil
	}
	for _, m := range fam.GetMetric() {
		if !labelsInclude(m, match) {
			continue
		}
		if err := f(fam.GetType(), m); err != nil {
			return err
		}
	}
	return nil
}

func labelsInclude(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
