package imageisa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
)

// ErrFailedRecently: a read of this image digest failed for a passing
// reason (the scan's time limit, a registry or transport error) less than
// [Options.RetryAfter] ago; it is read again after that.
var ErrFailedRecently = errors.New("image read failed recently")

// DefaultRetryAfter is how long a failed read is remembered when
// Options.RetryAfter is 0.
const DefaultRetryAfter = time.Minute

// maxFailures bounds the failed reads remembered; each holds a digest and
// at most maxFailureMessage bytes of message, so at most about 3 MiB.
const (
	maxFailures       = 4096
	maxFailureMessage = 256
)

// clockFunc adapts Options.Now to the clock of cache.LRUExpireCache.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// newFailures returns the short cache of failed reads, nil when d < 0.
func newFailures(d time.Duration, now func() time.Time) *cache.LRUExpireCache {
	if d < 0 {
		return nil
	}
	return cache.NewLRUExpireCacheWithClock(maxFailures, clockFunc(now))
}

// transient says whether a failed read says nothing of the image itself and
// is worth retrying later: its own time limit, a registry or transport
// error. A cancelled context is not remembered: it was a caller's, and a
// later caller would have read on.
func transient(err error) bool {
	return err != nil && !cacheable(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrFailedRecently) && !errors.Is(err, errBusy)
}

// failed remembers for RetryAfter that reading k failed with err, when err
// is transient.
func (in *Inferrer) failed(k Key, err error) {
	if in.failures == nil || !transient(err) {
		return
	}
	msg := err.Error()
	if len(msg) > maxFailureMessage {
		msg = strings.ToValidUTF8(msg[:maxFailureMessage], "") + "..."
	}
	in.failures.Add(k, fmt.Errorf("%w at %s: %s", ErrFailedRecently, in.now().UTC().Format(time.RFC3339), msg), in.retryAfter)
}

// failedRecently returns the error remembered for k, if any.
func (in *Inferrer) failedRecently(k Key) (error, bool) {
	if in.failures == nil {
		return nil, false
	}
	v, ok := in.failures.Get(k)
	if !ok {
		return nil, false
	}
	in.metrics.failureHit()
	return v.(error), true
}
