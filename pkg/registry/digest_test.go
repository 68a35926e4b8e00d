package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// threePlatforms is an index of three platform images.
func threePlatforms(t *testing.T) v1.ImageIndex {
	t.Helper()
	return index(t,
		entry{img: image(t, "linux", "riscv64", "rva23u64", map[string]string{"isa.request": "rv64gcv"}), platform: &v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}},
		entry{img: image(t, "linux", "amd64", "v3", nil), platform: &v1.Platform{OS: "linux", Architecture: "amd64", Variant: "v3"}},
		entry{img: image(t, "linux", "arm64", "", nil), platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
	)
}

// accounts puts HTTP basic auth in front of tr: a known user with the
// right password passes unless denied (403, as a registry's authorisation
// answers); anything else gets 401.
func accounts(tr *testRegistry, passwords map[string]string, denied ...string) {
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !ok || passwords[u] != p:
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return true
		case r.URL.Path != "/v2/" && strings.Contains(strings.Join(denied, ","), u):
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
			return true
		}
		return false
	})
}

// logins is a KeychainFactory giving each namespace its own login on the
// given hosts (namespaces not listed are anonymous).
func logins(hosts []string, byNamespace map[string]authn.AuthConfig) KeychainFactory {
	return func(_ context.Context, auth PullAuth) (authn.Keychain, error) {
		c, ok := byNamespace[auth.Namespace]
		if !ok {
			return staticKeychain{}, nil
		}
		kc := staticKeychain{}
		for _, h := range hosts {
			kc[h] = c
		}
		return kc, nil
	}
}

// requests are the registry requests of one resolution.
type requests struct{ Heads, ManifestGETs, BlobGETs int }

func (tr *testRegistry) manifestRequests() requests {
	return requests{tr.count(http.MethodHead, "/manifests/"), tr.count(http.MethodGet, "/manifests/"), tr.count(http.MethodGet, "/blobs/")}
}

// TestDigestCacheAcrossTenants: once one tenant has read an image, another
// tenant with other credentials resolves it with a single HEAD of its own
// (no GET), and a tenant the registry turns away gets its own error.
func TestDigestCacheAcrossTenants(t *testing.T) {
	tr := newTestRegistry(t)
	digestRef := tr.pushIndex(t, "private/app:1", threePlatforms(t))
	tagRef := tr.ref("private/app:1")
	accounts(tr, map[string]string{"alice": "s3cret", "bob": "hunter2", "mallory": "letmein"}, "mallory")
	m := NewMetrics()
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Metrics: m, Keychains: logins([]string{tr.host}, map[string]authn.AuthConfig{
		"team-a":  {Username: "alice", Password: "s3cret"},
		"team-b":  {Username: "bob", Password: "hunter2"},
		"team-c":  {Username: "bob", Password: "guess"},
		"team-d":  {Username: "mallory", Password: "letmein"},
		"team-e":  {Username: "alice", Password: "s3cret"},
		"team-a2": {Username: "alice", Password: "s3cret"},
	})})
	want, err := r.Resolve(t.Context(), tagRef, PullAuth{Namespace: "team-a"})
	if err != nil {
		t.Fatalf("tenant A: %v", err)
	}
	if len(want) != 3 {
		t.Fatalf("tenant A got %d platforms, want 3: %v", len(want), want)
	}
	// Each step runs after the previous ones, on the same resolver.
	steps := []struct {
		name      string
		namespace string
		ref       string
		kind      string // "" means the platforms tenant A got
		want      requests
		digestHit bool
	}{
		{name: "other credentials, same tag: one HEAD", namespace: "team-b", ref: tagRef, want: requests{Heads: 1}, digestHit: true},
		{name: "again: the tenant's own cache", namespace: "team-b", ref: tagRef},
		{name: "wrong password", namespace: "team-c", ref: tagRef, kind: KindUnauthorized, want: requests{Heads: 1}},
		{name: "anonymous", namespace: "team-x", ref: tagRef, kind: KindUnauthorized, want: requests{Heads: 1}},
		{name: "denied by the registry", namespace: "team-d", ref: tagRef, kind: KindForbidden, want: requests{Heads: 1}},
		{name: "by digest: a HEAD still proves access", namespace: "team-e", ref: digestRef, want: requests{Heads: 1}, digestHit: true},
		{name: "by digest, denied", namespace: "team-d", ref: digestRef, kind: KindForbidden, want: requests{Heads: 1}},
		{name: "by digest, anonymous", namespace: "team-y", ref: digestRef, kind: KindUnauthorized, want: requests{Heads: 1}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			tr.reset()
			hits := value(t, m.DigestCacheHits)
			got, err := r.Resolve(t.Context(), s.ref, PullAuth{Namespace: s.namespace})
			if s.kind == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("platforms (-tenant A +this tenant):\n%s", diff)
				}
			} else {
				var re *Error
				if !errors.As(err, &re) || re.Kind != s.kind || got != nil {
					t.Errorf("Resolve = %v, %v; want no platforms and an error of kind %s", got, err, s.kind)
				}
			}
			if diff := cmp.Diff(s.want, tr.manifestRequests()); diff != "" {
				t.Errorf("registry requests (-want +got):\n%s", diff)
			}
			if got := value(t, m.DigestCacheHits) - hits; got != map[bool]float64{true: 1}[s.digestHit] {
				t.Errorf("digest cache hits += %v, want %t", got, s.digestHit)
			}
		})
	}
}

// TestDigestCacheFallsBackToGET: a registry whose HEAD gives no digest is
// read with GETs, for every tenant, as if HEAD did not exist.
func TestDigestCacheFallsBackToGET(t *testing.T) {
	tests := []struct {
		name string
		head func(w http.ResponseWriter)
	}{
		{name: "HEAD not allowed", head: func(w http.ResponseWriter) { w.WriteHeader(http.StatusMethodNotAllowed) }},
		{name: "HEAD without Docker-Content-Digest", head: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
			w.Header().Set("Content-Length", "100")
		}},
		{name: "HEAD failing on the server", head: func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotImplemented) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRegistry(t)
			tr.pushIndex(t, "app/x:1", threePlatforms(t))
			tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodHead {
					return false
				}
				tc.head(w)
				return true
			})
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Keychains: logins(nil, nil)})
			for _, ns := range []string{"team-a", "team-b"} {
				tr.reset()
				got, err := r.Resolve(t.Context(), tr.ref("app/x:1"), PullAuth{Namespace: ns})
				if err != nil || len(got) != 3 {
					t.Fatalf("%s: Resolve = %v, %v; want 3 platforms", ns, got, err)
				}
				if diff := cmp.Diff(requests{Heads: 1, ManifestGETs: 4, BlobGETs: 3}, tr.manifestRequests()); diff != "" {
					t.Errorf("%s: registry requests (-want +got):\n%s", ns, diff)
				}
			}
		})
	}
}

// TestDigestCacheThroughMirror: platforms read through a mirror are shared
// under the origin's repository, so a second tenant's HEAD at the mirror,
// or at the origin when the mirror is down, is enough.
func TestDigestCacheThroughMirror(t *testing.T) {
	origin, mirror := newTestRegistry(t), newTestRegistry(t)
	idx := threePlatforms(t)
	origin.pushIndex(t, "app/x:1", idx)
	mirror.pushIndex(t, "app/x:1", idx)
	var mirrorDown bool
	mirror.setFront(func(w http.ResponseWriter, _ *http.Request) bool {
		if mirrorDown {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
		return mirrorDown
	})
	r := newResolver(t, Options{InsecureRegistries: []string{origin.host, mirror.host}, Mirrors: []string{origin.host + "=" + mirror.host}, Keychains: logins(nil, nil)})
	steps := []struct {
		name                   string
		namespace              string
		down                   bool
		fromOrigin, fromMirror requests
	}{
		{name: "first tenant reads through the mirror", namespace: "team-a", fromMirror: requests{Heads: 1, ManifestGETs: 4, BlobGETs: 3}},
		{name: "second tenant: one HEAD at the mirror", namespace: "team-b", fromMirror: requests{Heads: 1}},
		{name: "mirror down: one HEAD at the origin", namespace: "team-c", down: true, fromOrigin: requests{Heads: 1}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			origin.reset()
			mirror.reset()
			mirrorDown = s.down
			got, err := r.Resolve(t.Context(), origin.ref("app/x:1"), PullAuth{Namespace: s.namespace})
			if err != nil || len(got) != 3 {
				t.Fatalf("Resolve = %v, %v; want 3 platforms", got, err)
			}
			if diff := cmp.Diff(s.fromOrigin, origin.manifestRequests()); diff != "" {
				t.Errorf("origin requests (-want +got):\n%s", diff)
			}
			if s.down {
				return // the mirror's 503s are retried: not counted here
			}
			if diff := cmp.Diff(s.fromMirror, mirror.manifestRequests()); diff != "" {
				t.Errorf("mirror requests (-want +got):\n%s", diff)
			}
		})
	}
}
