package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers every collector with reg, stopping at the first
// failure; what names the group in the error ("registry metrics").
func Register(reg prometheus.Registerer, what string, collectors ...prometheus.Collector) error {
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register %s: %w", what, err)
		}
	}
	return nil
}
