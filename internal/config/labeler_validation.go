package config

import (
	"fmt"
	"math"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/probe"
)

const mustBePositive = "must be positive"

// omit leaves the value out of an error whose detail names it already.
var omit = field.OmitValueType{}

// ValidateLabeler checks a LabelerConfiguration; each error names the
// field path, the bad value and what is allowed.
func ValidateLabeler(c *v1alpha1.LabelerConfiguration) field.ErrorList {
	var errs field.ErrorList
	if err := metricsauth.CheckAudience(c.Metrics.TokenAudience); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metrics", "tokenAudience"), omit, err.Error()))
	}
	if d := c.Interval.Duration; d <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("interval"), d.String(), mustBePositive))
	}
	cmd := field.NewPath("commands")
	switch c.Commands.Exec {
	case v1alpha1.ExecAuto, v1alpha1.ExecChroot, v1alpha1.ExecDirect:
	default:
		errs = append(errs, field.Invalid(cmd.Child("exec"), c.Commands.Exec, "not a mode: use auto, chroot or direct"))
	}
	if d := c.Commands.Timeout.Duration; d <= 0 {
		errs = append(errs, field.Invalid(cmd.Child("timeout"), d.String(), mustBePositive))
	}
	for _, id := range []struct {
		name  string
		value uint
	}{{"uid", c.Commands.UID}, {"gid", c.Commands.GID}} {
		if id.value == 0 || id.value > math.MaxUint32-1 {
			errs = append(errs, field.Invalid(cmd.Child(id.name), int64(id.value),
				fmt.Sprintf("host commands never run as root; use an unprivileged ID below 4294967295 (default %d, nobody)", probe.NobodyID)))
		}
	}
	if c.Commands.MaxOutputBytes <= 0 {
		errs = append(errs, field.Invalid(cmd.Child("maxOutputBytes"), int64(c.Commands.MaxOutputBytes), mustBePositive))
	}
	emu := field.NewPath("emulation")
	if d := c.Emulation.Budget.Duration; d <= 0 {
		errs = append(errs, field.Invalid(emu.Child("budget"), d.String(), mustBePositive))
	}
	if pp := c.Emulation.ProbePrograms; pp != "" && !filepath.IsAbs(pp) {
		errs = append(errs, field.Invalid(emu.Child("probePrograms"), pp,
			fmt.Sprintf("must be an absolute path (the image's is %s)", probe.DefaultProgramsDir)))
	}
	return errs
}
