package registry

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxRetryAfter caps how long a registry's Retry-After keeps the resolver
// from asking it again: a registry (or anything answering for it) cannot
// silence itself for longer than this, and a clock skewed far ahead on
// its side cannot either.
const MaxRetryAfter = 10 * time.Minute

// maxRateLimitedHosts bounds the hosts remembered as rate limited; when
// full, the one whose wait ends first is forgotten.
const maxRateLimitedHosts = 1024

// errRateLimited marks a request not sent because its host answered 429
// with a Retry-After that has not passed yet.
var errRateLimited = errors.New("rate limited")

// rateLimits remembers, by registry host, until when a 429's Retry-After
// asked not to be asked again. A request to such a host fails at once
// with errRateLimited: nothing waits, so an admission falls back as it
// does for a registry that cannot be read. A 429 without Retry-After
// (or with one that does not parse, or is not in the future) is not
// remembered.
type rateLimits struct {
	mu    sync.Mutex
	until map[string]time.Time
	now   func() time.Time
}

func newRateLimits(now func() time.Time) *rateLimits {
	return &rateLimits{until: map[string]time.Time{}, now: now}
}

// check returns an errRateLimited error when host is rate limited now.
func (l *rateLimits) check(host string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.until[host]
	if !ok {
		return nil
	}
	if !l.now().Before(until) {
		delete(l.until, host)
		return nil
	}
	return fmt.Errorf("%w: %s answered 429 Too Many Requests; not asked again before %s (its Retry-After, at most %s)",
		errRateLimited, host, until.UTC().Format(time.RFC3339), MaxRetryAfter)
}

// record remembers the Retry-After of a 429 from host.
func (l *rateLimits) record(host string, h http.Header) {
	now := l.now()
	d, ok := parseRetryAfter(h.Get("Retry-After"), now)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, known := l.until[host]; !known && len(l.until) >= maxRateLimitedHosts {
		l.evict(now)
	}
	l.until[host] = now.Add(d)
}

// evict forgets the hosts whose wait has passed, or else the one whose
// wait ends first.
func (l *rateLimits) evict(now time.Time) {
	first := ""
	for h, t := range l.until {
		if !now.Before(t) {
			delete(l.until, h)
			continue
		}
		if first == "" || t.Before(l.until[first]) {
			first = h
		}
	}
	if len(l.until) >= maxRateLimitedHosts {
		delete(l.until, first)
	}
}

// parseRetryAfter reads a Retry-After value (RFC 9110: delay-seconds or
// an HTTP-date) as a wait from now, capped at MaxRetryAfter; ok is false
// when it is absent, does not parse, or is not in the future.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0, false
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		d = time.Duration(secs) * time.Second
	} else {
		t, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0, false
	}
	return min(d, MaxRetryAfter), true
}
