package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegister(t *testing.T) {
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total", Help: "a"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "b_total", Help: "b"})
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg, "test metrics", a, b); err != nil {
		t.Fatal(err)
	}
	// Registering again fails, and the error names the group.
	err := Register(reg, "test metrics", a)
	if err == nil || !strings.Contains(err.Error(), "register test metrics: ") {
		t.Fatalf("second Register error = %v, want one naming the group", err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 2 {
		t.Fatalf("gathered %d metric families, want 2", len(mfs))
	}
}
