package registry

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name, in string
		want     time.Duration
		ok       bool
	}{
		{name: "seconds", in: "30", want: 30 * time.Second, ok: true},
		{name: "HTTP date", in: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second, ok: true},
		{name: "seconds over the cap", in: "86400", want: MaxRetryAfter, ok: true},
		{name: "date over the cap", in: now.Add(48 * time.Hour).Format(http.TimeFormat), want: MaxRetryAfter, ok: true},
		{name: "huge number", in: "99999999999999999999", ok: false},
		{name: "absent", in: ""},
		{name: "zero", in: "0"},
		{name: "negative", in: "-5"},
		{name: "date in the past", in: now.Add(-time.Minute).Format(http.TimeFormat)},
		{name: "garbage", in: "soon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseRetryAfter(%q) = %v, %t; want %v, %t", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestRetryAfter: a 429 is counted as rateLimited, and its Retry-After
// keeps every image of that registry host from being asked until it
// passes (capped at MaxRetryAfter); then the host is asked again.
func TestRetryAfter(t *testing.T) {
	start := time.Unix(1e9, 0)
	for _, tc := range []struct {
		name       string
		retryAfter string
		quiet      time.Duration // the host is not asked before this
	}{
		{name: "seconds", retryAfter: "30", quiet: 30 * time.Second},
		{name: "HTTP date", retryAfter: start.Add(2 * time.Minute).UTC().Format(http.TimeFormat), quiet: 2 * time.Minute},
		{name: "absurd: capped", retryAfter: "31536000", quiet: MaxRetryAfter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRegistry(t)
			tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
			tr.pushImage(t, "app/y:1", image(t, "linux", "amd64", "", nil))
			tr.pushImage(t, "app/z:1", image(t, "linux", "amd64", "", nil))
			limited := true
			tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
				if !limited {
					return false
				}
				w.Header().Set("Retry-After", tc.retryAfter)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}`))
				return true
			})
			clock := &fakeClock{now: start}
			m := NewMetrics()
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m, now: clock.Now})
			resolve := func(repo string) error {
				_, err := r.Resolve(t.Context(), tr.ref(repo), teamA)
				return err
			}
			err := resolve("app/x:1")
			var re *Error
			if !errors.As(err, &re) || re.Kind != KindRateLimited {
				t.Fatalf("Resolve error = %v, want kind %s", err, KindRateLimited)
			}
			if got := testutil.ToFloat64(m.Errors.WithLabelValues(KindRateLimited)); got != 1 {
				t.Errorf("errors{kind=rateLimited} = %v, want 1", got)
			}
			limited = false // the registry would answer now: it must not be asked
			tr.reset()
			clock.Advance(tc.quiet - time.Second)
			err = resolve("app/y:1")
			if !errors.As(err, &re) || re.Kind != KindRateLimited || !strings.Contains(err.Error(), "not asked again before") {
				t.Errorf("within Retry-After: Resolve error = %v, want kind %s, not asked", err, KindRateLimited)
			}
			if got := tr.snapshot(); len(got) != 0 {
				t.Errorf("within Retry-After the registry was asked: %v", got)
			}
			clock.Advance(2 * time.Second)
			// Another image: app/y's failure stays cached for its error TTL.
			if err := resolve("app/z:1"); err != nil {
				t.Errorf("after Retry-After: Resolve: %v", err)
			}
			if got := testutil.ToFloat64(m.Errors.WithLabelValues(KindRateLimited)); got != 2 {
				t.Errorf("errors{kind=rateLimited} = %v, want 2", got)
			}
		})
	}
}

// TestRateLimitedWithoutRetryAfter: a 429 without Retry-After is counted as
// rateLimited and not remembered: the next image is asked at once.
func TestRateLimitedWithoutRetryAfter(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/y:1", image(t, "linux", "amd64", "", nil))
	limited := true
	tr.setFront(func(w http.ResponseWriter, _ *http.Request) bool {
		if limited {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		return limited
	})
	m := NewMetrics()
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m})
	_, err := r.Resolve(t.Context(), tr.ref("app/x:1"), teamA)
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindRateLimited {
		t.Fatalf("Resolve error = %v, want kind %s", err, KindRateLimited)
	}
	limited = false
	if _, err := r.Resolve(t.Context(), tr.ref("app/y:1"), teamA); err != nil {
		t.Errorf("next image: Resolve: %v", err)
	}
}

// TestRetryAfterMirror: a rate-limited mirror is skipped, without a
// request, for the next host while its Retry-After lasts.
func TestRetryAfterMirror(t *testing.T) {
	origin, mirror := newTestRegistry(t), newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	origin.pushImage(t, "app/x:2", image(t, "linux", "amd64", "", nil))
	mirror.setFront(func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	r := newResolver(t, Options{InsecureRegistries: []string{origin.host, mirror.host}, Mirrors: []string{origin.host + "=" + mirror.host}})
	for i, repo := range []string{"app/x:1", "app/x:2"} {
		mirror.reset()
		got, err := r.Resolve(t.Context(), origin.ref(repo), teamA)
		if err != nil || len(got) != 1 {
			t.Fatalf("Resolve %d = %v, %v; want the origin's", i, got, err)
		}
		if n := len(mirror.snapshot()); (n > 0) != (i == 0) {
			t.Errorf("resolution %d: the mirror served %d request kinds, want requests only the first time", i, n)
		}
	}
}
