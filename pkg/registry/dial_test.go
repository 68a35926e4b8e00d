package registry

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// countedRegistry starts an in-process registry on loopback that counts
// the connections made to it.
func countedRegistry(t *testing.T) (*countingListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	srv.Listener = cl
	srv.Start()
	t.Cleanup(srv.Close)
	return cl, ln.Addr().String()
}

// TestNonPublicAddressesRefused: a pod's image reference cannot make the
// webhook connect to loopback, link-local, private or CGNAT addresses (its
// own metrics port, cloud metadata, cluster services), directly or through
// a redirect, unless an operator allowed the registry.
func TestNonPublicAddressesRefused(t *testing.T) {
	counted, addr := countedRegistry(t)
	tr := newTestRegistry(t)
	tr.pushImage(t, "app/x:1", image(t, "linux", "amd64", "", nil))
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/v2/redirect/") {
			http.Redirect(w, r, "https://"+addr+"/v2/app/x/manifests/1", http.StatusTemporaryRedirect)
			return true
		}
		return false
	})
	tests := []struct {
		name     string
		opts     Options
		ref      string
		kind     string // "" means success
		text     string
		connects bool // whether the counted registry may see a connection
	}{
		{name: "loopback registry not allowed", ref: addr + "/app/x:1", kind: KindRefused, text: "Loopback"},
		{name: "cloud metadata", ref: "169.254.169.254/latest:1", kind: KindRefused, text: "169.254.169.254 is the cloud instance metadata"},
		{name: "cloud metadata port 80", ref: "169.254.169.254:80/latest:1", kind: KindRefused, text: "metadata"},
		{name: "private address", ref: "10.0.0.1/app/x:1", kind: KindRefused, text: "10.0.0.1 is in Private-Use"},
		{name: "private IPv6", ref: "[fd00::1]:5000/app/x:1", kind: KindRefused, text: "Unique-Local, private"},
		{name: "CGNAT", ref: "100.64.0.1/app/x:1", kind: KindRefused, text: "CGNAT"},
		{name: "unspecified", ref: "0.0.0.0:5000/app/x:1", kind: KindRefused, text: "This network"},
		{name: "localhost by name", ref: "localhost" + addr[strings.LastIndex(addr, ":"):] + "/app/x:1", kind: KindRefused, text: "Loopback"},
		{name: "redirect from an allowed registry to loopback", opts: Options{InsecureRegistries: []string{tr.host}},
			ref: tr.ref("redirect/x:1"), kind: KindRefused, text: "Loopback"},
		{name: "plain HTTP to an allowed host that is not insecure", opts: Options{AllowedRegistries: []string{addr}},
			ref: addr + "/app/x:1", kind: KindRefused, text: "plain HTTP", connects: true},
		{name: "allowed by CIDR, still HTTPS only", opts: Options{AllowedRegistries: []string{"127.0.0.0/8"}},
			ref: addr + "/app/x:1", kind: KindRefused, text: "plain HTTP", connects: true},
		{name: "insecure registry allowed", opts: Options{InsecureRegistries: []string{addr}}, ref: addr + "/app/x:1", connects: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kind == "" {
				pushTo(t, addr, "app/x:1")
			}
			before := counted.accepted.Load()
			r := newResolver(t, tc.opts)
			_, err := r.Resolve(t.Context(), tc.ref, teamA)
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
			} else {
				var re *Error
				if !errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(err.Error(), tc.text) {
					t.Errorf("Resolve error = %v, want kind %s mentioning %q", err, tc.kind, tc.text)
				}
			}
			if n := counted.accepted.Load() - before; !tc.connects && n != 0 {
				t.Errorf("the loopback registry accepted %d connections, want 0", n)
			}
		})
	}
}

func pushTo(t *testing.T, host, repoTag string) {
	t.Helper()
	(&testRegistry{host: host}).pushImage(t, repoTag, image(t, "linux", "amd64", "", nil))
}
