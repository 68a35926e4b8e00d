// Package reproducible holds what the release tools (hack/images,
// hack/plugin, hack/release) read alike so that a release can be rebuilt
// byte for byte: SOURCE_DATE_EPOCH, every time they write, and the release
// version.
package reproducible

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// EpochEnv is the variable the time of every file and record comes from.
const EpochEnv = "SOURCE_DATE_EPOCH"

// Epoch is the time EpochEnv (read with getenv) gives, 1970-01-01 when it
// is unset.
func Epoch(getenv func(string) string) (time.Time, error) {
	s := getenv(EpochEnv)
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("%s=%q is not a count of seconds since 1970: unset it or set it like %s=$(git log -1 --format=%%ct)", EpochEnv, s, EpochEnv)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// version is a release version: semantic, with the v.
var version = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// CheckVersion returns an error naming v unless it is a release version,
// vMAJOR.MINOR.PATCH with an optional pre-release.
func CheckVersion(v string) error {
	if !version.MatchString(v) {
		return fmt.Errorf("%q is not a release version: want vMAJOR.MINOR.PATCH such as v0.1.0 (semantic versioning, with the v)", v)
	}
	return nil
}
