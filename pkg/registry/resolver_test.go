package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/isamatch/isamatch/pkg/isa"
)

var teamA = PullAuth{Namespace: "team-a"}

func TestResolvePlatforms(t *testing.T) {
	tr := newTestRegistry(t)
	rva23 := image(t, "linux", "riscv64", "rva23u64", map[string]string{"isa.request": "rv64gcv"})
	rv64 := image(t, "linux", "riscv64", "", nil)
	amd64v3 := image(t, "linux", "amd64", "v3", map[string]string{"isa.request": "x86-64-v3", "other": "x"})
	arm64 := image(t, "linux", "arm64", "v8", nil)
	attest := image(t, "unknown", "unknown", "", nil)
	multi := index(t,
		entry{img: rva23, platform: &v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}},
		entry{img: rv64, platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
		entry{img: amd64v3, platform: &v1.Platform{OS: "linux", Architecture: "amd64", Variant: "v3"}},
		entry{img: attest, platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}},
		entry{img: arm64, platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}},
	)
	multiDigest := tr.pushIndex(t, "app/multi:1.0", multi)
	singleDigest := tr.pushImage(t, "app/single:latest", rva23)
	// Descriptors without a platform: the configs say it.
	tr.pushIndex(t, "app/bare:1", index(t, entry{img: amd64v3}, entry{img: arm64}))
	// An attestation entry whose annotation is the only marker.
	tr.pushIndex(t, "app/annotated:1", index(t,
		entry{img: rv64, platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
		entry{img: amd64v3, platform: &v1.Platform{OS: "linux", Architecture: "amd64"},
			annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}},
	))
	// An index of indexes.
	tr.pushIndex(t, "app/nested:1", index(t,
		entry{img: index(t, entry{img: rv64, platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}})},
		entry{img: arm64, platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}},
	))

	multiWant := []Platform{
		{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", ISARequest: "rv64gcv"},
		{OS: "linux", Architecture: "riscv64"},
		{OS: "linux", Architecture: "amd64", Variant: "v3", ISARequest: "x86-64-v3"},
		{OS: "linux", Architecture: "arm64", Variant: "v8"},
	}
	tests := []struct {
		name string
		ref  string
		want []Platform
	}{
		{name: "index with variants, labels and an attestation", ref: tr.ref("app/multi:1.0"), want: multiWant},
		{name: "index by digest", ref: multiDigest, want: multiWant},
		{name: "single manifest", ref: tr.ref("app/single:latest"),
			want: []Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", ISARequest: "rv64gcv"}}},
		{name: "single manifest by digest", ref: singleDigest,
			want: []Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", ISARequest: "rv64gcv"}}},
		{name: "index without descriptor platforms", ref: tr.ref("app/bare:1"), want: []Platform{
			{OS: "linux", Architecture: "amd64", Variant: "v3", ISARequest: "x86-64-v3"},
			{OS: "linux", Architecture: "arm64", Variant: "v8"},
		}},
		{name: "attestation marked by annotation only", ref: tr.ref("app/annotated:1"),
			want: []Platform{{OS: "linux", Architecture: "riscv64"}}},
		{name: "nested index", ref: tr.ref("app/nested:1"), want: []Platform{
			{OS: "linux", Architecture: "riscv64"},
			{OS: "linux", Architecture: "arm64", Variant: "v8"},
		}},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(t.Context(), tc.ref, teamA)
			if err != nil {
				t.Fatalf("Resolve(%s): %v", tc.ref, err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDigest); diff != "" {
				t.Errorf("Resolve(%s) (-want +got):\n%s", tc.ref, diff)
			}
		})
	}
}

// TestIgnoreBareImageLabel: with IgnoreBareImageLabel an image's isa.request
// label (the paper's bare key, which may mean something else in a cluster)
// is not read; io.isamatch.isa.request still is.
func TestIgnoreBareImageLabel(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/bare:1", image(t, "linux", "riscv64", "", map[string]string{isa.BareImageRequestLabel: "rv64gcv"}))
	tr.pushImage(t, "app/both:1", image(t, "linux", "riscv64", "", map[string]string{isa.BareImageRequestLabel: "rv64gcv", isa.ImageRequestLabel: "rv64gc"}))
	for _, tc := range []struct {
		ignore     bool
		bare, both string
	}{{false, "rv64gcv", "rv64gc"}, {true, "", "rv64gc"}} {
		r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, IgnoreBareImageLabel: tc.ignore})
		for ref, want := range map[string]string{"app/bare:1": tc.bare, "app/both:1": tc.both} {
			got, err := r.Resolve(t.Context(), tr.ref(ref), teamA)
			if err != nil {
				t.Fatalf("Resolve(%s): %v", ref, err)
			}
			if len(got) != 1 || got[0].ISARequest != want {
				t.Errorf("IgnoreBareImageLabel=%v: Resolve(%s) = %+v, want the request %q", tc.ignore, ref, got, want)
			}
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/ok:1", image(t, "linux", "amd64", "", nil))
	tr.pushIndex(t, "app/onlyattest:1", index(t, entry{img: image(t, "unknown", "unknown", "", nil),
		platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}}))
	tr.pushImage(t, "app/noarch:1", image(t, "linux", "", "", nil))
	huge := strings.Repeat(" ", 2048)
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/v2/forbidden/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
			return true
		case strings.HasPrefix(p, "/v2/malformed/") && strings.Contains(p, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
			fmt.Fprint(w, `{"schemaVersion": 2, "manifests": [ {"mediaType": `)
			return true
		case strings.HasPrefix(p, "/v2/huge/") && strings.Contains(p, "/manifests/"):
			body := `{"schemaVersion": 2, "manifests": []` + huge + `}`
			w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			fmt.Fprint(w, body)
			return true
		case strings.HasPrefix(p, "/v2/hugechunked/") && strings.Contains(p, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
			fmt.Fprint(w, `{"schemaVersion": 2, "manifests": []`)
			w.(http.Flusher).Flush() // no Content-Length: chunked
			fmt.Fprint(w, huge+`}`)
			return true
		case strings.HasPrefix(p, "/v2/artifact/") && strings.Contains(p, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.example.thing")
			fmt.Fprint(w, `{}`)
			return true
		}
		return false
	})
	tests := []struct {
		name string
		ref  string
		kind string
		text string // part of the message
	}{
		// A HEAD answer has no body: the status names the failure.
		{name: "missing tag", ref: tr.ref("app/ok:2"), kind: KindNotFound, text: "HTTP 404"},
		{name: "missing repository", ref: tr.ref("nothing/here:1"), kind: KindNotFound},
		{name: "denied", ref: tr.ref("forbidden/x:1"), kind: KindForbidden, text: "HTTP 403"},
		{name: "malformed JSON", ref: tr.ref("malformed/x:1"), kind: KindMalformed},
		{name: "manifest over the limit with Content-Length", ref: tr.ref("huge/x:1"), kind: KindTooLarge, text: "limit is 1024"},
		{name: "manifest over the limit, chunked", ref: tr.ref("hugechunked/x:1"), kind: KindTooLarge, text: "limit of 1024"},
		{name: "not an image", ref: tr.ref("artifact/x:1"), kind: KindMalformed, text: "neither an image"},
		{name: "index of attestations only", ref: tr.ref("app/onlyattest:1"), kind: KindMalformed, text: "no runnable platform"},
		{name: "config without architecture", ref: tr.ref("app/noarch:1"), kind: KindMalformed, text: "no architecture"},
		{name: "invalid reference", ref: "UPPER/Case::x", kind: KindOther, text: "invalid image reference"},
		{name: "unreachable registry", ref: "127.0.0.1:1/app/x:1", kind: KindUnreachable},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host, "127.0.0.1:1"}, maxManifestBytes: 1024})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(t.Context(), tc.ref, teamA)
			if err == nil {
				t.Fatalf("Resolve(%s) = %v, want an error of kind %s", tc.ref, got, tc.kind)
			}
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("Resolve(%s) error %v is not an *Error", tc.ref, err)
			}
			if re.Kind != tc.kind || re.Ref != tc.ref {
				t.Errorf("Resolve(%s) error kind %q ref %q, want kind %q ref %q (%v)", tc.ref, re.Kind, re.Ref, tc.kind, tc.ref, err)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("Resolve(%s) error %q does not mention %q", tc.ref, err, tc.text)
			}
		})
	}
}

// basicAuth puts HTTP basic auth in front of the test registry.
func basicAuth(tr *testRegistry, user, password string) {
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		if ok && u == user && p == password {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
		return true
	})
}

type staticKeychain map[string]authn.AuthConfig

func (k staticKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	if c, ok := k[res.RegistryStr()]; ok {
		return authn.FromConfig(c), nil
	}
	return authn.Anonymous, nil
}

func TestResolveBasicAuth(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "private/app:1", image(t, "linux", "riscv64", "", nil))
	basicAuth(tr, "alice", "s3cret")
	keychains := func(_ context.Context, auth PullAuth) (authn.Keychain, error) {
		switch auth.Namespace {
		case "good":
			return staticKeychain{tr.host: {Username: "alice", Password: "s3cret"}}, nil
		case "wrong":
			return staticKeychain{tr.host: {Username: "alice", Password: "nope"}}, nil
		case "broken":
			return nil, errors.New("secrets are forbidden")
		}
		return staticKeychain{}, nil
	}
	tests := []struct {
		name      string
		namespace string
		kind      string // "" means success
	}{
		{name: "right password", namespace: "good"},
		{name: "wrong password", namespace: "wrong", kind: KindUnauthorized},
		{name: "anonymous", namespace: "anon", kind: KindUnauthorized},
		{name: "credentials unreadable", namespace: "broken", kind: KindOther},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Keychains: keychains})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(t.Context(), tr.ref("private/app:1"), PullAuth{Namespace: tc.namespace})
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "riscv64"}}, got, ignoreDigest); diff != "" {
					t.Errorf("Resolve (-want +got):\n%s", diff)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Kind != tc.kind {
				t.Errorf("Resolve error = %v, want kind %s", err, tc.kind)
			}
		})
	}
}

func TestResolveSlowRegistryHonoursDeadline(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "slow/app:1", image(t, "linux", "amd64", "", nil))
	release := make(chan struct{})
	defer close(release)
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/manifests/") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return true
		}
		return false
	})
	tests := []struct {
		name         string
		fetchTimeout time.Duration
		ctxTimeout   time.Duration
	}{
		{name: "caller deadline shorter than the shared fetch", fetchTimeout: time.Minute, ctxTimeout: 200 * time.Millisecond},
		{name: "shared fetch timeout shorter than the caller", fetchTimeout: 200 * time.Millisecond, ctxTimeout: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, fetchTimeout: tc.fetchTimeout})
			ctx, cancel := context.WithTimeout(t.Context(), tc.ctxTimeout)
			defer cancel()
			start := time.Now()
			_, err := r.Resolve(ctx, tr.ref("slow/app:1"), teamA)
			elapsed := time.Since(start)
			var re *Error
			if !errors.As(err, &re) || re.Kind != KindTimeout {
				t.Errorf("Resolve error = %v, want kind %s", err, KindTimeout)
			}
			if elapsed > 5*time.Second {
				t.Errorf("Resolve returned after %v, want soon after the 200ms deadline", elapsed)
			}
		})
	}
}

func TestSharedResolutionSurvivesFirstCallerCancel(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "arm64", "", nil))
	gate := make(chan struct{})
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/manifests/") {
			<-gate
		}
		return false
	})
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
	ref := tr.ref("app/x:1")

	first, cancelFirst := context.WithCancel(t.Context())
	firstErr := make(chan error, 1)
	go func() {
		_, err := r.Resolve(first, ref, teamA)
		firstErr <- err
	}()
	// Wait until the shared resolution is at the registry (its HEAD).
	for tr.count(http.MethodHead, "/manifests/") == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	var got []Platform
	go func() {
		var err error
		got, err = r.Resolve(t.Context(), ref, teamA)
		second <- err
	}()
	cancelFirst()
	if err := <-firstErr; err == nil || !strings.Contains(err.Error(), KindTimeout) {
		t.Errorf("cancelled caller got %v, want a timeout error", err)
	}
	close(gate)
	if err := <-second; err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "arm64"}}, got, ignoreDigest); diff != "" {
		t.Errorf("second caller (-want +got):\n%s", diff)
	}
	if n := tr.count(http.MethodGet, "/manifests/"); n != 1 {
		t.Errorf("manifest GETs = %d, want 1", n)
	}
}

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

// TestConcurrentResolveCollapses is the key property: 1,000 concurrent
// lookups of the same uncached image cost one registry resolution.
func TestConcurrentResolveCollapses(t *testing.T) {
	tr := newTestRegistry(t)
	tests := []struct {
		name      string
		push      func(t *testing.T) string
		manifests int // manifest GETs of one resolution
		blobs     int // config blob GETs of one resolution
	}{
		{name: "single manifest", manifests: 1, blobs: 1, push: func(t *testing.T) string {
			tr.pushImage(t, "app/single:1", image(t, "linux", "riscv64", "", nil))
			return tr.ref("app/single:1")
		}},
		{name: "index of three platforms", manifests: 4, blobs: 3, push: func(t *testing.T) string {
			tr.pushIndex(t, "app/multi:1", index(t,
				entry{img: image(t, "linux", "riscv64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
				entry{img: image(t, "linux", "amd64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
				entry{img: image(t, "linux", "arm64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
			))
			return tr.ref("app/multi:1")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := tc.push(t)
			m := NewMetrics()
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m})
			gate := make(chan struct{})
			tr.reset()
			var wg sync.WaitGroup
			errs := make(chan error, 1000)
			for range 1000 {
				wg.Go(func() {
					<-gate
					ps, err := r.Resolve(t.Context(), ref, teamA)
					if err == nil && len(ps) == 0 {
						err = errors.New("no platforms")
					}
					if err != nil {
						errs <- err
					}
				})
			}
			close(gate)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("Resolve: %v", err)
			}
			if got := tr.count(http.MethodGet, "/manifests/"); got != tc.manifests {
				t.Errorf("manifest GETs = %d, want %d (requests: %v)", got, tc.manifests, tr.snapshot())
			}
			if got := tr.count(http.MethodGet, "/blobs/"); got != tc.blobs {
				t.Errorf("blob GETs = %d, want %d", got, tc.blobs)
			}
			hits, misses, coalesced := value(t, m.CacheHits), value(t, m.CacheMisses), value(t, m.Coalesced)
			if misses != 1 || hits+coalesced != 999 {
				t.Errorf("metrics: misses %v hits %v coalesced %v, want 1 miss and 999 hits+coalesced", misses, hits, coalesced)
			}
			if got := value(t, m.Requests.WithLabelValues("manifest")); got != float64(tc.manifests) {
				t.Errorf("requests{type=manifest} = %v, want %d", got, tc.manifests)
			}
		})
	}
}

func TestMaxConcurrentBoundsRequests(t *testing.T) {
	tr := newTestRegistry(t)
	var entries []entry
	for i := range 12 {
		arch := fmt.Sprintf("arch%d", i)
		entries = append(entries, entry{img: image(t, "linux", arch, "", nil), platform: &v1.Platform{OS: "linux", Architecture: arch}})
	}
	tr.pushIndex(t, "app/wide:1", index(t, entries...))
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		time.Sleep(20 * time.Millisecond) // let requests overlap
		return false
	})
	tests := []struct {
		name string
		max  int
	}{
		{name: "one at a time", max: 1},
		{name: "three at a time", max: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, maxConcurrent: tc.max})
			tr.reset()
			got, err := r.Resolve(t.Context(), tr.ref("app/wide:1"), teamA)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if len(got) != 12 {
				t.Errorf("Resolve returned %d platforms, want 12", len(got))
			}
			if seen := tr.maxSeen.Load(); seen > int64(tc.max) {
				t.Errorf("registry saw %d requests at once, want at most %d", seen, tc.max)
			}
		})
	}
}

func TestErrorsAreCountedByKind(t *testing.T) {
	tr := newTestRegistry(t)
	m := NewMetrics()
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m})
	for range 3 {
		_, _ = r.Resolve(t.Context(), tr.ref("app/none:1"), teamA)
	}
	if got := value(t, m.Errors.WithLabelValues(KindNotFound)); got != 3 {
		t.Errorf("errors{kind=notFound} = %v, want 3", got)
	}
	if got := value(t, m.CacheHits); got != 2 {
		t.Errorf("cache hits = %v, want 2 (the error is cached)", got)
	}
}

// TestOptionsValidate: NewResolver refuses options that are out of range
// or do not parse, naming the field, the value and what is wanted; the
// zero value is valid.
func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string // "" means valid
	}{
		{name: "zero value"},
		{name: "every field set", o: Options{RegistryCA: nil, InsecureRegistries: []string{"127.0.0.1:5000"},
			AllowedRegistries: []string{"10.0.0.0/8", "registry.lab"}, ClusterNetworks: []string{"10.96.0.0/12"},
			Mirrors: []string{"docker.io=mirror.lab:5000"}, MaxPerHost: 1, MaxPerNamespace: 1, MaxResolutionBytes: 1,
			MaxIndexEntries: 1, MaxCacheBytes: 1, MaxDigestCacheBytes: 1, TTL: -1}},
		{name: "no certificate in PEM", o: Options{RegistryCA: []byte("not a pem")}, want: "RegistryCA: no PEM certificate found"},
		{name: "malformed mirror", o: Options{Mirrors: []string{"docker.io"}}, want: `Mirrors: mirror "docker.io": want REGISTRY=MIRROR`},
		{name: "negative bound", o: Options{MaxPerHost: -1}, want: "MaxPerHost -1: want a number >= 1, or 0 for the default"},
		{name: "negative budget", o: Options{MaxResolutionBytes: -5}, want: "MaxResolutionBytes -5"},
		{name: "insecure registry with a scheme", o: Options{InsecureRegistries: []string{"http://r.lab"}}, want: `InsecureRegistries[0] "http://r.lab": want HOST:PORT`},
		{name: "bad allowed CIDR", o: Options{AllowedRegistries: []string{"10.0.0.0/33"}}, want: `allowed registry "10.0.0.0/33": not a CIDR`},
		{name: "bad cluster network", o: Options{ClusterNetworks: []string{"0.0.0.0/0"}}, want: `cluster network "0.0.0.0/0": a /0 blocks every address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			r, nerr := NewResolver(tc.o)
			if (err == nil) != (nerr == nil) {
				t.Fatalf("Validate = %v but NewResolver = %v: want the same answer", err, nerr)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want valid", err)
			case tc.want == "" && r == nil:
				t.Error("NewResolver returned no resolver and no error")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// value reads a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatalf("read metric: %v", err)
	}
	return m.GetCounter().GetValue()
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
