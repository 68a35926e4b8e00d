package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/probe"
)

// DefaultLabeler is the labeler's configuration when no file sets
// anything: the one source of its defaults.
func DefaultLabeler() v1alpha1.LabelerConfiguration {
	return v1alpha1.LabelerConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.LabelerConfigurationKind},
		HostRoot: "/host",
		Interval: metav1.Duration{Duration: 10 * time.Minute},
		Metrics:  v1alpha1.Metrics{BindAddress: ":8080", Secure: true, TokenAudience: metricsauth.DefaultAudience},
		Health:   v1alpha1.Health{BindAddress: ":8081"},
		Commands: v1alpha1.Commands{
			Exec:           v1alpha1.ExecAuto,
			Timeout:        metav1.Duration{Duration: probe.DefaultCommandTimeout},
			UID:            probe.NobodyID,
			GID:            probe.NobodyID,
			MaxOutputBytes: probe.DefaultMaxOutput,
		},
		HWProbe: true,
		Emulation: v1alpha1.Emulation{
			ProbePrograms: probe.DefaultProgramsDir,
			Budget:        metav1.Duration{Duration: probe.DefaultEmulationBudget},
		},
	}
}
