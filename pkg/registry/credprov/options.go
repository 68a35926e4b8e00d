package credprov

import (
	"errors"
	"fmt"
	"time"
)

// Options configures a [Keychain]. ConfigPath and BinDir are required; the
// zero value of every other field is its default, documented on the field.
type Options struct {
	// ConfigPath is the kubelet's --image-credential-provider-config: a
	// CredentialProviderConfig file, or a directory of them.
	ConfigPath string
	// BinDir is the kubelet's --image-credential-provider-bin-dir: every
	// provider's executable must be in it, and a plugin is only ever run
	// from it.
	BinDir string
	// Timeout bounds one plugin run, at most MaxTimeout (0:
	// DefaultTimeout); the plugin's process group is killed past it.
	Timeout time.Duration
	// MaxRuns bounds the plugin processes running at once, at most
	// MaxRunsLimit (0: DefaultMaxRuns), and MaxRunsPerNamespace those
	// started for the resolutions of one namespace, at most MaxRuns (0:
	// DefaultMaxRunsPerNamespace, or MaxRuns when smaller). Each calls its
	// cloud's API, and images on many hosts one provider matches (any AWS
	// account's ECR host) would otherwise start one each. A run waits for
	// its slots for at most the plugin timeout.
	MaxRuns             int
	MaxRunsPerNamespace int
	// Metrics, when set, counts plugin runs by result, their duration and
	// the answers served from the cache ([NewMetrics]).
	Metrics *Metrics

	// Tuning knobs only the package's tests change; zero means the default.
	cacheEntries int
	cacheBytes   int64
	now          func() time.Time
}

// Defaults and limits of the Options fields.
const (
	// DefaultTimeout bounds one plugin run. (The kubelet allows a minute;
	// an admission waits at most 10s, and a slower plugin holds its
	// resolution's singleflight slot, never an admission.)
	DefaultTimeout = 10 * time.Second
	// MaxTimeout is the longest Timeout, the kubelet's own bound.
	MaxTimeout = time.Minute
	// DefaultMaxRuns bounds the plugin processes running at once.
	DefaultMaxRuns = 8
	// MaxRunsLimit is the largest MaxRuns.
	MaxRunsLimit = 64
	// DefaultMaxRunsPerNamespace bounds those started for the resolutions
	// of one namespace.
	DefaultMaxRunsPerNamespace = 2
)

// Settings no user changes.
const (
	// cacheEntries and cacheBytes bound the credentials cached from
	// plugins; one namespace may fill a quarter of each.
	cacheEntries = 1024
	cacheBytes   = 4 << 20
	// failureTTL is how long a plugin failure is remembered per provider
	// and registry, so a failing plugin is not run again for every pod.
	failureTTL = 10 * time.Second
)

// Validate reports the first field of o that is missing or out of range,
// naming it, its value and what is wanted.
func (o Options) Validate() error {
	switch {
	case o.ConfigPath == "":
		return errors.New("credential provider options: ConfigPath is empty: name the CredentialProviderConfig file or directory")
	case o.BinDir == "":
		return errors.New("credential provider options: BinDir is empty: name the directory of the provider executables")
	case o.Timeout < 0 || o.Timeout > MaxTimeout:
		return fmt.Errorf("credential provider options: Timeout %v: want a duration in (0, %v], or 0 for %v", o.Timeout, MaxTimeout, DefaultTimeout)
	case o.MaxRuns < 0 || o.MaxRuns > MaxRunsLimit:
		return fmt.Errorf("credential provider options: MaxRuns %d: want 1..%d, or 0 for %d", o.MaxRuns, MaxRunsLimit, DefaultMaxRuns)
	}
	if runs := o.withDefaults().MaxRuns; o.MaxRunsPerNamespace < 0 || o.MaxRunsPerNamespace > runs {
		return fmt.Errorf("credential provider options: MaxRunsPerNamespace %d: want 1..%d (MaxRuns), or 0 for the default", o.MaxRunsPerNamespace, runs)
	}
	return nil
}

// withDefaults fills in the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.MaxRunsPerNamespace == 0 {
		o.MaxRunsPerNamespace = min(DefaultMaxRunsPerNamespace, o.MaxRuns)
	}
	if o.cacheEntries == 0 {
		o.cacheEntries = cacheEntries
	}
	if o.cacheBytes == 0 {
		o.cacheBytes = cacheBytes
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}
