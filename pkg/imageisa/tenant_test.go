package imageisa

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/registry"
)

// substitute serves one blob digest with other bytes, or with a status.
type substitute struct {
	next   http.Handler
	digest string
	body   []byte
	status int
}

func (s *substitute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+s.digest) {
		if s.status != 0 {
			w.WriteHeader(s.status)
			return
		}
		_, _ = w.Write(s.body)
		return
	}
	s.next.ServeHTTP(w, r)
}

// pushTo pushes img to a new in-process registry served through wrap and
// returns its reference there.
func pushTo(t *testing.T, repo string, img v1.Image, wrap func(http.Handler) http.Handler) (string, string) {
	t.Helper()
	srv := httptest.NewServer(wrap(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(host+"/"+repo, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	return ref.String(), host
}

// TestTenantCannotPoisonAnotherImage: a tenant publishes the victim's
// manifest, byte for byte, in its own repository, whose registry answers
// the program layer's digest with other bytes (or with an error). What is
// learnt from that registry must not become the victim's answer.
func TestTenantCannotPoisonAnotherImage(t *testing.T) {
	cfg := v1.Config{Entrypoint: []string{"/usr/bin/app"}, Cmd: []string{"--serve"}}
	real := layer(t, dir("usr"), dir("usr/bin"), fixtureFile("usr/bin/app", "riscv64-rv64imfd", t), zeros("usr/share/data", 1<<20))
	victim := image(t, "riscv64", cfg, real)
	forged := layer(t, dir("usr"), dir("usr/bin"), fixtureFile("usr/bin/app", "riscv64-rv64gcv_zba_zbb", t), zeros("usr/share/data", 1<<20))
	realDigest, err := real.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// The forged layer is cut or padded to the real one's size: a client
	// that checks Content-Length sees nothing amiss, and a scan that stops
	// at the program never reaches the end where the digest is checked.
	forgedBytes := compressed(t, forged)
	realSize, err := real.Size()
	if err != nil {
		t.Fatal(err)
	}
	forgedBytes = append(forgedBytes, make([]byte, max(0, int(realSize)-len(forgedBytes)))...)[:realSize]
	cases := []struct {
		name string
		sub  substitute
	}{
		{name: "layer answered with other bytes", sub: substitute{digest: realDigest.String(), body: forgedBytes}},
		{name: "layer answered with an error", sub: substitute{digest: realDigest.String(), status: http.StatusNotFound}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			victimRef, victimHost := pushTo(t, "team-a/app:1", victim, func(h http.Handler) http.Handler { return h })
			evilRef, evilHost := pushTo(t, "team-b/app:1", victim, func(h http.Handler) http.Handler {
				s := tc.sub
				s.next = h
				return &s
			})
			res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{victimHost, evilHost}, AllowedRegistries: []string{"127.0.0.1"}})
			ps := NewPlatforms(NewInferrer(Options{CacheBytes: 1 << 20}), res)
			evilAuth, victimAuth := registry.PullAuth{Namespace: "team-b"}, registry.PullAuth{Namespace: "team-a"}
			evilPlats, err := res.Resolve(t.Context(), evilRef, evilAuth)
			if err != nil || len(evilPlats) != 1 {
				t.Fatalf("resolve %s: %+v, %v", evilRef, evilPlats, err)
			}
			victimPlats, err := res.Resolve(t.Context(), victimRef, victimAuth)
			if err != nil || len(victimPlats) != 1 || victimPlats[0].Digest != evilPlats[0].Digest {
				t.Fatalf("resolve %s: %+v, %v; want the same digest as %+v", victimRef, victimPlats, err, evilPlats)
			}
			er, eerr := ps.Infer(t.Context(), evilRef, evilAuth, evilPlats[0])
			t.Logf("attacker's image: %s, %v", Outcome(er, eerr), eerr)
			if eerr == nil && er.ISA != nil && er.ISA.Compact() != "rv64imfd" {
				t.Errorf("attacker's image judged %s from bytes that do not match its digest", er.ISA.Compact())
			}
			r, err := ps.Infer(t.Context(), victimRef, victimAuth, victimPlats[0])
			if err != nil || r.ISA == nil || r.ISA.Compact() != "rv64imfd" {
				got := "none"
				if r.ISA != nil {
					got = r.ISA.Compact()
				}
				t.Fatalf("victim's image judged %s, %v; want rv64imfd from its own registry", got, err)
			}
		})
	}
}

// compressed returns a layer's compressed bytes.
func compressed(t *testing.T, l v1.Layer) []byte {
	t.Helper()
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
