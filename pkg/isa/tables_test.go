package isa

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnobservableNames pins the extensions no kernel reports; docs/labels.md and
// doc.go list the same ten.
func TestUnobservableNames(t *testing.T) {
	want := []string{"ziccif", "ziccrse", "ziccamoa", "zicclsm", "za64rs", "za128rs", "zic64b", "ziccamoc", "zama16b", "supm"}
	if diff := cmp.Diff(want, unobservableNames); diff != "" {
		t.Errorf("unobservableNames (-want +got):\n%s", diff)
	}
}

// TestProfilesParse: every profile name in the table parses, and to the
// architecture its expansion names.
func TestProfilesParse(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			got, err := Parse(p.name)
			if err != nil {
				t.Fatal(err)
			}
			want := RISCV64
			if strings.HasPrefix(p.march, "rv32") {
				want = RISCV32
			}
			if got.Arch != want {
				t.Errorf("arch %s, want %s", got.Arch, want)
			}
		})
	}
}
