package registry

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMirrorSpec(t *testing.T) {
	for _, tc := range []struct {
		name, in, from, to, err string
	}{
		{name: "docker hub", in: "docker.io=mirror.local:5000", from: "index.docker.io", to: "mirror.local:5000"},
		{name: "docker hub index name", in: "index.docker.io=mirror.local", from: "index.docker.io", to: "mirror.local"},
		{name: "host and port", in: "ghcr.io=10.0.0.5:5000", from: "ghcr.io", to: "10.0.0.5:5000"},
		{name: "no equals", in: "docker.io", err: `mirror "docker.io": want REGISTRY=MIRROR`},
		{name: "empty mirror", in: "docker.io=", err: `want REGISTRY=MIRROR`},
		{name: "two equals", in: "a.io=b.io=c.io", err: `want REGISTRY=MIRROR`},
		{name: "scheme", in: "docker.io=https://mirror.local", err: `"https://mirror.local": want a host or host:port without scheme or path`},
		{name: "path", in: "docker.io=mirror.local/hub", err: `without scheme or path`},
		{name: "not a host", in: "docker io=mirror.local", err: `"docker io" is not a registry host`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, err := parseMirror(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseMirror(%q) error = %v, want one containing %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseMirror(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff([2]string{tc.from, tc.to}, [2]string{from, to}); diff != "" {
				t.Errorf("parseMirror(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseMirrors(t *testing.T) {
	many := make([]string, maxMirrors+1)
	for i := range many {
		many[i] = fmt.Sprintf("r%d.example=mirror.local", i)
	}
	for _, tc := range []struct {
		name  string
		specs []string
		err   string
	}{
		{name: "at the limit", specs: many[:maxMirrors]},
		{name: "same mapping twice", specs: []string{"docker.io=m.local", "index.docker.io=m.local"}},
		{name: "over the limit", specs: many, err: fmt.Sprintf("%d mirrored registries: the limit is %d", maxMirrors+1, maxMirrors)},
		{name: "two mirrors for one registry", specs: []string{"docker.io=a.local", "index.docker.io=b.local"}, err: "already mirrored by a.local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMirrors(tc.specs)
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ParseMirrors error = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestMirror resolves an image of origin through mirror: the mirror
// answers when it can, the origin when the mirror fails, and the error
// names both when neither can.
func TestMirror(t *testing.T) {
	origin, mirror := newTestRegistry(t), newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "arm64", "", nil))
	mirror.pushImage(t, "app/x:1", image(t, "linux", "riscv64", "", nil))
	origin.pushImage(t, "app/only-origin:1", image(t, "linux", "amd64", "", nil))
	for _, tc := range []struct {
		name        string
		ref         string
		mirrorDown  bool
		want        []Platform
		wantKind    string
		fromOrigin  int // manifest GETs the origin served
		wantFallbck float64
	}{
		{name: "mirror has it", ref: "app/x:1", want: []Platform{{OS: "linux", Architecture: "riscv64"}}},
		{name: "mirror lacks it: origin", ref: "app/only-origin:1", want: []Platform{{OS: "linux", Architecture: "amd64"}}, fromOrigin: 1, wantFallbck: 1},
		{name: "mirror down: origin", ref: "app/x:1", mirrorDown: true, want: []Platform{{OS: "linux", Architecture: "arm64"}}, fromOrigin: 1, wantFallbck: 1},
		{name: "neither has it", ref: "app/none:1", wantKind: KindNotFound, wantFallbck: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			origin.reset()
			mirror.reset()
			mirror.setFront(func(w http.ResponseWriter, _ *http.Request) bool {
				if tc.mirrorDown {
					http.Error(w, "down", http.StatusServiceUnavailable)
				}
				return tc.mirrorDown
			})
			m := NewMetrics()
			r := newResolver(t, Options{InsecureRegistries: []string{origin.host, mirror.host}, Mirrors: []string{origin.host + "=" + mirror.host}, Metrics: m})
			got, err := r.Resolve(t.Context(), origin.ref(tc.ref), PullAuth{Namespace: "ns"})
			if tc.wantKind != "" {
				var re *Error
				if !errors.As(err, &re) || re.Kind != tc.wantKind || !strings.Contains(err.Error(), "mirror "+mirror.host+" failed (notFound)") {
					t.Fatalf("Resolve error = %v, want kind %s naming the mirror", err, tc.wantKind)
				}
			} else if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreDigest); diff != "" {
				t.Errorf("platforms (-want +got):\n%s", diff)
			}
			if n := origin.count("GET", "/manifests/"); tc.wantKind == "" && n != tc.fromOrigin {
				t.Errorf("origin served %d manifest GETs, want %d", n, tc.fromOrigin)
			}
			if got := value(t, m.MirrorFallbacks); got != tc.wantFallbck {
				t.Errorf("mirror fallbacks = %v, want %v", got, tc.wantFallbck)
			}
		})
	}
}
