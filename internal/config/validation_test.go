package config

import (
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

func TestValidateLabeler(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *v1alpha1.LabelerConfiguration)
		want   string // "": valid
	}{
		{name: "defaults", change: func(*v1alpha1.LabelerConfiguration) {}},
		{name: "root uid", change: func(c *v1alpha1.LabelerConfiguration) { c.Commands.UID = 0 },
			want: "commands.uid: Invalid value: 0: host commands never run as root"},
		{name: "exec mode", change: func(c *v1alpha1.LabelerConfiguration) { c.Commands.Exec = "ssh" },
			want: `commands.exec: Invalid value: "ssh": not a mode: use auto, chroot or direct`},
		{name: "relative probe programs", change: func(c *v1alpha1.LabelerConfiguration) { c.Emulation.ProbePrograms = "probes" },
			want: `emulation.probePrograms: Invalid value: "probes": must be an absolute path`},
		{name: "zero interval", change: func(c *v1alpha1.LabelerConfiguration) { c.Interval.Duration = 0 },
			want: `interval: Invalid value: "0s": must be positive`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultLabeler()
			tc.change(&c)
			errs := ValidateLabeler(&c)
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("ValidateLabeler() = %v, want no error", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("ValidateLabeler() = %v, want one error mentioning %q", errs, tc.want)
			}
		})
	}
}
