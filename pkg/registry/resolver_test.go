package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

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
