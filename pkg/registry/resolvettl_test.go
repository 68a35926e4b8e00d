package registry

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestCacheTTL(t *testing.T) {
	tr := newTestRegistry(t)
	digest := tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	tests := []struct {
		name    string
		ref     string
		advance []time.Duration // clock steps, each followed by a Resolve
		// Manifest requests after the first Resolve and all steps: a
		// resolution HEADs; it GETs when the digest's platforms are not
		// cached (they live for the digest TTL).
		heads, gets int
	}{
		{name: "tag within TTL", ref: tr.ref("app/x:1"), advance: []time.Duration{time.Minute, 3 * time.Minute}, heads: 1, gets: 1},
		{name: "tag after TTL: HEAD, digest still cached", ref: tr.ref("app/x:1"), advance: []time.Duration{5*time.Minute + time.Second}, heads: 2, gets: 1},
		{name: "tag after digest TTL", ref: tr.ref("app/x:1"), advance: []time.Duration{24*time.Hour + time.Second}, heads: 2, gets: 2},
		{name: "digest after tag TTL", ref: digest, advance: []time.Duration{time.Hour, 20 * time.Hour}, heads: 1, gets: 1},
		{name: "digest after digest TTL", ref: digest, advance: []time.Duration{24*time.Hour + time.Second}, heads: 2, gets: 2},
		{name: "error within error TTL", ref: tr.ref("app/x:404"), advance: []time.Duration{5 * time.Second}, heads: 1},
		{name: "error after error TTL", ref: tr.ref("app/x:404"), advance: []time.Duration{11 * time.Second}, heads: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1e9, 0)}
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, now: clock.Now})
			tr.reset()
			_, _ = r.Resolve(t.Context(), tc.ref, teamA)
			for _, d := range tc.advance {
				clock.Advance(d)
				_, _ = r.Resolve(t.Context(), tc.ref, teamA)
			}
			got := [2]int{tr.count(http.MethodHead, "/manifests/"), tr.count(http.MethodGet, "/manifests/")}
			if diff := cmp.Diff([2]int{tc.heads, tc.gets}, got); diff != "" {
				t.Errorf("manifest [HEADs GETs] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCached: the cache-only lookup misses before a resolution, then
// answers what Resolve answered (platforms or the cached error) without a
// registry request, per spelling and credentials, until the entry expires.
func TestCached(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Keychains: func(context.Context, PullAuth) (authn.Keychain, error) {
		return staticKeychain{}, nil
	}, now: clock.Now})
	good, missing := tr.ref("app/x:1"), tr.ref("app/x:404")
	for _, ref := range []string{good, missing} {
		if _, ok, _ := r.Cached(ref, teamA); ok {
			t.Errorf("Cached(%s) hit before any resolution", ref)
		}
	}
	want, _ := r.Resolve(t.Context(), good, teamA)
	_, wantErr := r.Resolve(t.Context(), missing, teamA)
	tr.reset()
	got, ok, err := r.Cached(good, teamA)
	if !ok || err != nil {
		t.Fatalf("Cached(%s) = ok %t, err %v; want a hit", good, ok, err)
	}
	if diff := cmp.Diff(want, got, ignoreDigest); diff != "" {
		t.Errorf("Cached platforms (-Resolve +Cached):\n%s", diff)
	}
	if _, ok, err := r.Cached(missing, teamA); !ok || err == nil || err.Error() != wantErr.Error() {
		t.Errorf("Cached(%s) = ok %t, err %v; want the cached error %v", missing, ok, err, wantErr)
	}
	if _, ok, _ := r.Cached(good, PullAuth{Namespace: "other"}); ok {
		t.Error("Cached hit for other credentials")
	}
	if n := tr.count(http.MethodGet, "/"); n != 0 {
		t.Errorf("Cached made %d registry requests, want 0", n)
	}
	clock.Advance(5*time.Minute + time.Second)
	if _, ok, _ := r.Cached(good, teamA); ok {
		t.Error("Cached hit after the TTL")
	}
}

func TestCacheKeyIsCredentialIdentity(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	anyKeychain := func(context.Context, PullAuth) (authn.Keychain, error) { return staticKeychain{}, nil }
	tests := []struct {
		name   string
		auths  []PullAuth
		want   int // manifest HEADs: one per identity (one GET in all)
		anonym bool
	}{
		{name: "same identity", auths: []PullAuth{{Namespace: "a"}, {Namespace: "a", ServiceAccountName: "default"}}, want: 1},
		{name: "secret order does not matter", auths: []PullAuth{
			{Namespace: "a", ImagePullSecrets: []string{"x", "y"}}, {Namespace: "a", ImagePullSecrets: []string{"y", "x"}}}, want: 1},
		{name: "duplicate secrets do not matter", auths: []PullAuth{
			{Namespace: "a", ImagePullSecrets: []string{"x", "x", "y"}}, {Namespace: "a", ImagePullSecrets: []string{"y", "x"}}}, want: 1},
		{name: "other namespace", auths: []PullAuth{{Namespace: "a"}, {Namespace: "b"}}, want: 2},
		{name: "other service account", auths: []PullAuth{{Namespace: "a"}, {Namespace: "a", ServiceAccountName: "builder"}}, want: 2},
		{name: "other secrets", auths: []PullAuth{{Namespace: "a"}, {Namespace: "a", ImagePullSecrets: []string{"x"}}}, want: 2},
		{name: "anonymous resolver shares across namespaces", auths: []PullAuth{{Namespace: "a"}, {Namespace: "b"}}, want: 1, anonym: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{InsecureRegistries: []string{tr.host}}
			if !tc.anonym {
				o.Keychains = anyKeychain
			}
			r := newResolver(t, o)
			tr.reset()
			for _, a := range tc.auths {
				before := slices.Clone(a.ImagePullSecrets)
				if _, err := r.Resolve(t.Context(), tr.ref("app/x:1"), a); err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if diff := cmp.Diff(before, a.ImagePullSecrets); diff != "" {
					t.Errorf("Resolve changed the caller's ImagePullSecrets (-want +got):\n%s", diff)
				}
			}
			if got := tr.count(http.MethodHead, "/manifests/"); got != tc.want {
				t.Errorf("manifest HEADs = %d, want %d", got, tc.want)
			}
			if got := tr.count(http.MethodGet, "/manifests/"); got != 1 {
				t.Errorf("manifest GETs = %d, want 1", got)
			}
		})
	}
}

func TestCacheAliases(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:latest", image(t, "linux", "amd64", "", nil))
	long, short := tr.ref("app/x:latest"), tr.ref("app/x")
	type step struct {
		advance time.Duration
		ref     string
	}
	tests := []struct {
		name  string
		steps []step
		want  int // manifest HEADs
	}{
		{name: "two spellings share one resolution", steps: []step{{0, long}, {time.Minute, short}, {time.Minute, long}}, want: 1},
		{name: "an alias does not extend the entry's life", steps: []step{{0, long}, {4 * time.Minute, short}, {time.Minute + time.Second, short}}, want: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1e9, 0)}
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, now: clock.Now})
			tr.reset()
			for _, s := range tc.steps {
				clock.Advance(s.advance)
				if _, err := r.Resolve(t.Context(), s.ref, teamA); err != nil {
					t.Fatalf("Resolve(%s): %v", s.ref, err)
				}
			}
			if got := tr.count(http.MethodHead, "/manifests/"); got != tc.want {
				t.Errorf("manifest HEADs = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("a cached error names the caller's spelling", func(t *testing.T) {
		r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
		for _, ref := range []string{tr.ref("app/missing:latest"), tr.ref("app/missing")} {
			_, err := r.Resolve(t.Context(), ref, teamA)
			var re *Error
			if !errors.As(err, &re) || re.Ref != ref || re.Kind != KindNotFound {
				t.Errorf("Resolve(%s) error = %#v, want notFound naming %s", ref, err, ref)
			}
		}
	})
}
