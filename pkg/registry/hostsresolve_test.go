package registry

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// down makes tr answer 503 to everything while *on is true.
func down(tr *testRegistry, on *bool) {
	tr.setFront(func(w http.ResponseWriter, _ *http.Request) bool {
		if *on {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
		return *on
	})
}

// hostsResolver returns a resolver reading the hosts directory of files.
func hostsResolver(t *testing.T, files map[string]string, o Options) *Resolver {
	t.Helper()
	h, err := ReadHostsDir(writeHosts(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) > 0 {
		t.Fatalf("warnings: %q", h.Warnings)
	}
	o.Hosts = h
	return newResolver(t, o)
}

// TestHostsDirMirrorsInOrder: the hosts of a hosts.toml are asked in file
// order, each when the one before failed, and the server last.
func TestHostsDirMirrorsInOrder(t *testing.T) {
	origin, m1, m2 := newTestRegistry(t), newTestRegistry(t), newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	m1.pushImage(t, "app/x:1", image(t, "linux", "arm64", "", nil))
	m2.pushImage(t, "app/x:1", image(t, "linux", "riscv64", "", nil))
	var m1Down, m2Down bool
	down(m1, &m1Down)
	down(m2, &m2Down)
	for _, tc := range []struct {
		name           string
		m1Down, m2Down bool
		want           string
		fallbacks      float64
	}{
		{name: "first mirror answers", want: "arm64"},
		{name: "first down: second", m1Down: true, want: "riscv64", fallbacks: 1},
		{name: "both down: the server", m1Down: true, m2Down: true, want: "amd64", fallbacks: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m1Down, m2Down = tc.m1Down, tc.m2Down
			for _, tr := range []*testRegistry{origin, m1, m2} {
				tr.reset()
			}
			m := NewMetrics()
			r := hostsResolver(t, map[string]string{
				dirOf(origin.host) + "/hosts.toml": fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
					"http://"+origin.host, "http://"+m1.host, "http://"+m2.host),
			}, Options{Metrics: m})
			got, err := r.Resolve(t.Context(), origin.ref("app/x:1"), teamA)
			if err != nil || len(got) != 1 || got[0].Architecture != tc.want {
				t.Fatalf("Resolve = %v, %v; want %s", got, err, tc.want)
			}
			served := map[string]int{"m1": m1.count(http.MethodGet, "/manifests/"), "m2": m2.count(http.MethodGet, "/manifests/"), "origin": origin.count(http.MethodGet, "/manifests/")}
			wantServed := map[string]int{"m1": 0, "m2": 0, "origin": 0}
			wantServed[map[string]string{"arm64": "m1", "riscv64": "m2", "amd64": "origin"}[tc.want]] = 1
			if diff := cmp.Diff(wantServed, served); diff != "" {
				t.Errorf("manifest GETs served (-want +got):\n%s", diff)
			}
			if got := value(t, m.MirrorFallbacks); got != tc.fallbacks {
				t.Errorf("mirror fallbacks = %v, want %v", got, tc.fallbacks)
			}
		})
	}
	t.Run("all down: the error names each", func(t *testing.T) {
		m1Down, m2Down = true, true
		r := hostsResolver(t, map[string]string{
			dirOf(origin.host) + "/hosts.toml": fmt.Sprintf("[host.%q]\n[host.%q]\n", "http://"+m1.host, "http://"+m2.host),
		}, Options{InsecureRegistries: []string{origin.host}})
		_, err := r.Resolve(t.Context(), origin.ref("app/none:1"), teamA)
		want := fmt.Sprintf("mirror %s failed (unreachable), mirror %s failed (unreachable), then the origin:", m1.host, m2.host)
		var re *Error
		if !errors.As(err, &re) || re.Kind != KindNotFound || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve error = %v, want kind notFound and %q", err, want)
		}
	})
}

// dirOf is containerd's directory name of a "host:port" registry,
// "host_port_" (a ConfigMap key cannot hold a colon).
func dirOf(host string) string {
	if i := strings.LastIndex(host, ":"); i > 0 {
		return host[:i] + "_" + host[i+1:] + "_"
	}
	return host
}

// TestHostsDirCapabilities: a tag is resolved by hosts that resolve, and
// its content, as a digest's, read from hosts that pull; a host with
// neither is never asked.
func TestHostsDirCapabilities(t *testing.T) {
	origin, pullOnly, resolveOnly, neither := newTestRegistry(t), newTestRegistry(t), newTestRegistry(t), newTestRegistry(t)
	img := image(t, "linux", "arm64", "", nil)
	digestRef := origin.pushImage(t, "app/x:1", img)
	for _, tr := range []*testRegistry{pullOnly, resolveOnly, neither} {
		tr.pushImage(t, "app/x:1", img)
	}
	hosts := map[string]string{
		dirOf(origin.host) + "/hosts.toml": fmt.Sprintf("server = %q\n[host.%q]\ncapabilities = []\n[host.%q]\ncapabilities = [\"pull\"]\n[host.%q]\ncapabilities = [\"resolve\"]\n",
			"http://"+origin.host, "http://"+neither.host, "http://"+pullOnly.host, "http://"+resolveOnly.host),
	}
	all := []*testRegistry{origin, pullOnly, resolveOnly, neither}
	for _, tc := range []struct {
		name        string
		ref         string
		heads, gets *testRegistry
	}{
		{name: "tag: resolved by the resolve host, pulled from the pull host", ref: origin.ref("app/x:1"), heads: resolveOnly, gets: pullOnly},
		{name: "digest: the pull host", ref: digestRef, heads: pullOnly, gets: pullOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tr := range all {
				tr.reset()
			}
			// A resolver of its own: nothing cached.
			r := hostsResolver(t, hosts, Options{})
			if _, err := r.Resolve(t.Context(), tc.ref, teamA); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			for _, tr := range all {
				if heads := tr.count(http.MethodHead, "/manifests/"); (heads > 0) != (tr == tc.heads) && tr != tc.gets {
					t.Errorf("%s served %d manifest HEADs, want them from %s", tr.host, heads, tc.heads.host)
				}
				if gets := tr.count(http.MethodGet, "/manifests/"); (gets > 0) != (tr == tc.gets) {
					t.Errorf("%s served %d manifest GETs, want them only from %s", tr.host, gets, tc.gets.host)
				}
			}
		})
	}
}

// TestHostsDirPullOnlyMirror: with a pull-only mirror before the server,
// as containerd reads it, a tag is resolved by the server with a HEAD and
// every manifest of it (an index and its images) is read from the mirror;
// the server serves the GETs only when the mirror is down.
func TestHostsDirPullOnlyMirror(t *testing.T) {
	origin, mirror := newTestRegistry(t), newTestRegistry(t)
	idx := index(t, entry{img: image(t, "linux", "amd64", "", nil)}, entry{img: image(t, "linux", "riscv64", "", nil)})
	origin.pushIndex(t, "app/x:1", idx)
	mirror.pushIndex(t, "app/x:1", idx)
	var mirrorDown bool
	down(mirror, &mirrorDown)
	hosts := map[string]string{
		dirOf(origin.host) + "/hosts.toml": fmt.Sprintf("server = %q\n[host.%q]\n  capabilities = [\"pull\"]\n", "http://"+origin.host, "http://"+mirror.host),
	}
	for _, tc := range []struct {
		name                   string
		down                   bool
		originGets, mirrorGets bool
	}{
		{name: "mirror up: content from the mirror", mirrorGets: true},
		{name: "mirror down: content from the server", down: true, originGets: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mirrorDown = tc.down
			origin.reset()
			mirror.reset()
			// A resolver of its own: nothing cached.
			r := hostsResolver(t, hosts, Options{})
			got, err := r.Resolve(t.Context(), origin.ref("app/x:1"), teamA)
			if err != nil || len(got) != 2 {
				t.Fatalf("Resolve = %v, %v; want the index's two platforms", got, err)
			}
			if n := origin.count(http.MethodHead, "/manifests/1"); n != 1 {
				t.Errorf("the server answered %d HEADs of the tag, want 1 (it resolves)", n)
			}
			if n := origin.count(http.MethodGet, "/manifests/"); (n > 0) != tc.originGets {
				t.Errorf("the server served %d manifest GETs, want any: %v", n, tc.originGets)
			}
			if n := mirror.count(http.MethodGet, "/manifests/sha256:"); (n > 0) != tc.mirrorGets {
				t.Errorf("the mirror served %d manifest GETs by digest, want any: %v", n, tc.mirrorGets)
			}
			if n := mirror.count(http.MethodHead, "/manifests/1") + mirror.count(http.MethodGet, "/manifests/1"); n != 0 {
				t.Errorf("the pull-only mirror was asked the tag %d times", n)
			}
		})
	}
}

// TestHostsDirAPIRoot: a host URL with a path is the API root's prefix
// (/prefix/v2); with override_path it is the API root itself.
func TestHostsDirAPIRoot(t *testing.T) {
	origin := newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	for _, tc := range []struct {
		name, hostPath, served, extra string
	}{
		{name: "path prefix", hostPath: "/hub", served: "/hub/v2"},
		{name: "override_path", hostPath: "/api/proxy", served: "/api/proxy", extra: "override_path = true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The mirror serves the registry API under tc.served only.
			mirror := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rest, ok := strings.CutPrefix(r.URL.Path, tc.served)
				if !ok {
					http.NotFound(w, r)
					return
				}
				r.URL.Path = "/v2" + rest
				inner.ServeHTTP(w, r)
			}))
			pushVia(t, mirror, tc.served, "app/x:1")
			r := hostsResolver(t, map[string]string{
				dirOf(origin.host) + "/hosts.toml": fmt.Sprintf("server = %q\n[host.%q]\n%s", "http://"+origin.host, "http://"+mirror.host+tc.hostPath, tc.extra),
			}, Options{})
			got, err := r.Resolve(t.Context(), origin.ref("app/x:1"), teamA)
			if err != nil || len(got) != 1 || got[0].Architecture != "riscv64" {
				t.Fatalf("Resolve = %v, %v; want the mirror's riscv64", got, err)
			}
			if n := mirror.count(http.MethodGet, tc.served+"/app/x/manifests/"); n != 1 {
				t.Errorf("mirror served %d manifest GETs under %s, want 1", n, tc.served)
			}
		})
	}
}

// pushVia pushes a riscv64 image to repoTag of tr, whose API root is at
// root: the push goes to /v2 and is moved there by tr's handler.
func pushVia(t *testing.T, tr *testRegistry, root, repoTag string) {
	t.Helper()
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.URL.Path = root + strings.TrimPrefix(req.URL.Path, "/v2")
		return http.DefaultTransport.RoundTrip(req)
	})
	ref, err := name.ParseReference(tr.ref(repoTag), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, image(t, "linux", "riscv64", "", nil), remote.WithTransport(rt)); err != nil {
		t.Fatalf("push %s: %v", repoTag, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// tlsRegistry is an in-process registry over HTTPS with its own
// self-signed certificate, holding a riscv64 app/x:1.
func tlsRegistry(t *testing.T) (host string, caPEM []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "https://")
	ref, err := name.ParseReference(host + "/app/x:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, image(t, "linux", "riscv64", "", nil), remote.WithTransport(srv.Client().Transport)); err != nil {
		t.Fatalf("push: %v", err)
	}
	return host, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// TestHostsDirTLS: a host's ca file (relative to its hosts.toml) and
// skip_verify apply to that host alone.
func TestHostsDirTLS(t *testing.T) {
	origin := newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	mirror, caPEM := tlsRegistry(t)
	other, _ := tlsRegistry(t)
	for _, tc := range []struct {
		name, settings string
		want           string
	}{
		{name: "ca file", settings: "ca = \"mirror-ca.pem\"\n", want: "riscv64"},
		{name: "skip_verify", settings: "skip_verify = true\n", want: "riscv64"},
		{name: "neither: unknown authority, the server answers", want: "amd64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hostsResolver(t, map[string]string{
				dirOf(origin.host) + "/hosts.toml":    fmt.Sprintf("server = %q\n[host.%q]\n%s", "http://"+origin.host, "https://"+mirror, tc.settings),
				dirOf(origin.host) + "/mirror-ca.pem": string(caPEM),
				// Another TLS registry: the mirror's settings are not its.
				dirOf(other) + "/hosts.toml": "",
			}, Options{AllowedRegistries: []string{other}})
			got, err := r.Resolve(t.Context(), origin.ref("app/x:1"), teamA)
			if err != nil || len(got) != 1 || got[0].Architecture != tc.want {
				t.Fatalf("Resolve = %v, %v; want %s", got, err, tc.want)
			}
			_, err = r.Resolve(t.Context(), other+"/app/x:1", teamA)
			var re *Error
			if !errors.As(err, &re) || re.Kind != KindUnreachable {
				t.Errorf("another TLS registry: Resolve error = %v, want kind unreachable (its certificate is not trusted)", err)
			}
		})
	}
}

// TestHostsDirDefault: _default's hosts serve registries without a
// directory of their own, the registry itself last.
func TestHostsDirDefault(t *testing.T) {
	origin, mirror, own := newTestRegistry(t), newTestRegistry(t), newTestRegistry(t)
	origin.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	mirror.pushImage(t, "app/x:1", image(t, "linux", "riscv64", "", nil))
	own.pushImage(t, "app/x:1", image(t, "linux", "arm64", "", nil))
	r := hostsResolver(t, map[string]string{
		"_default/hosts.toml":           fmt.Sprintf("[host.%q]\n", "http://"+mirror.host),
		dirOf(own.host) + "/hosts.toml": fmt.Sprintf("server = %q\n", "http://"+own.host),
	}, Options{InsecureRegistries: []string{origin.host}})
	for _, tc := range []struct{ ref, want string }{
		{ref: origin.ref("app/x:1"), want: "riscv64"},
		{ref: origin.ref("app/only-origin:1"), want: "amd64"},
		{ref: own.ref("app/x:1"), want: "arm64"},
	} {
		if tc.want == "amd64" {
			origin.pushImage(t, "app/only-origin:1", image(t, "linux", "amd64", "", nil))
		}
		got, err := r.Resolve(t.Context(), tc.ref, teamA)
		if err != nil || len(got) != 1 || got[0].Architecture != tc.want {
			t.Errorf("Resolve(%s) = %v, %v; want %s", tc.ref, got, err, tc.want)
		}
	}
	if n := mirror.count(http.MethodHead, "/app/x/manifests/") + mirror.count(http.MethodGet, "/app/x/manifests/"); n == 0 {
		t.Error("the _default mirror was never asked")
	}
}
