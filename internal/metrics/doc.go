// Package metrics holds what the binaries share about exporting Prometheus
// collectors; the collectors themselves live in the packages they measure.
package metrics
