package probe

import "errors"

// Sources a probe reads, as named in [Result.Failed], in a [SourceError]
// and in the labeler's metrics.
const (
	SourceCPUInfo  = "cpuinfo"
	SourceHWProbe  = "hwprobe"
	SourceGCC      = "gcc"
	SourceCrossGCC = "cross-gcc"
	SourceBinfmt   = "binfmt"
)

// SourceError is a failure of one source that fails the whole probe: an
// unreadable /proc/cpuinfo or binfmt_misc, or no native ISA at all. Its
// message is the wrapped error's.
type SourceError struct {
	Source string
	Err    error
}

func (e *SourceError) Error() string { return e.Err.Error() }

func (e *SourceError) Unwrap() error { return e.Err }

// FailedSource names the source of a [Probe] error, or "" when the error
// comes from none (a cancelled context, say).
func FailedSource(err error) string {
	if se, ok := errors.AsType[*SourceError](err); ok {
		return se.Source
	}
	return ""
}

func sourceErr(source string, err error) error { return &SourceError{Source: source, Err: err} }
