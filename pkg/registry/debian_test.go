package registry

import (
	"errors"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/isamatch/isamatch/internal/testbed"
)

// TestDigestCacheDebianRegistry checks the digest cache against Debian's
// docker-registry (Docker distribution, TLS, htpasswd) behind a proxy
// that counts requests by method: the second tenant's resolution of a
// three-platform index is one HEAD, and a tenant with a wrong password
// gets its own error.
func TestDigestCacheDebianRegistry(t *testing.T) {
	reg, err := testbed.StartRegistry(t.Context(), testbed.RegistryOptions{})
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("start docker-registry: %v", err)
	}
	t.Cleanup(func() {
		if err := reg.Stop(); err != nil {
			t.Errorf("stop docker-registry: %v", err)
		}
	})
	if _, err := testbed.PushIndex(t.Context(), reg, "app/multi", "v1", []testbed.Platform{
		{Arch: "riscv64", Variant: "rva23u64", Labels: map[string]string{"isa.request": "rv64gcv"}}, {Arch: "amd64", Variant: "v3"}, {Arch: "arm64"},
	}); err != nil {
		t.Fatal(err)
	}
	target := &url.URL{Scheme: "https", Host: reg.Host}
	proxy := newCountingServer(t, &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: reg.Transport(),
	})
	login := authn.AuthConfig{Username: reg.Username, Password: reg.Password}
	r := newResolver(t, Options{InsecureRegistries: []string{proxy.host}, Keychains: logins([]string{proxy.host}, map[string]authn.AuthConfig{
		"team-a": login,
		"team-b": login,
		"team-c": {Username: reg.Username, Password: "wrong"},
	})})
	ref := proxy.ref("app/multi:v1")
	var first []Platform
	steps := []struct {
		namespace string
		kind      string // "" means the platforms team-a got
		want      requests
	}{
		{namespace: "team-a", want: requests{Heads: 1, ManifestGETs: 4, BlobGETs: 3}},
		{namespace: "team-b", want: requests{Heads: 1}},
		{namespace: "team-c", kind: KindUnauthorized, want: requests{Heads: 1}},
	}
	for _, s := range steps {
		t.Run(s.namespace, func(t *testing.T) {
			proxy.reset()
			got, err := r.Resolve(t.Context(), ref, PullAuth{Namespace: s.namespace})
			switch {
			case s.kind != "":
				var re *Error
				if !errors.As(err, &re) || re.Kind != s.kind || got != nil {
					t.Errorf("Resolve = %v, %v; want no platforms and an error of kind %s", got, err, s.kind)
				}
			case err != nil:
				t.Fatalf("Resolve: %v", err)
			case first == nil:
				if len(got) != 3 {
					t.Fatalf("Resolve = %v, want 3 platforms", got)
				}
				first = got
			default:
				if diff := cmp.Diff(first, got); diff != "" {
					t.Errorf("platforms (-team-a +%s):\n%s", s.namespace, diff)
				}
			}
			if diff := cmp.Diff(s.want, proxy.manifestRequests()); diff != "" {
				t.Errorf("registry requests (-want +got):\n%s", diff)
			}
		})
	}
}
