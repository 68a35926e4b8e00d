package registry

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// TestResolutionBudget: one image costs at most the configured index
// entries and response bytes, each response counted as it is read.
func TestResolutionBudget(t *testing.T) {
	tr := newTestRegistry(t)
	var entries []entry
	for i := range 10 {
		arch := fmt.Sprintf("arch%d", i)
		entries = append(entries, entry{img: image(t, "linux", arch, "", nil), platform: &v1.Platform{OS: "linux", Architecture: arch}})
	}
	tr.pushIndex(t, "app/wide:1", index(t, entries...))
	tr.pushIndex(t, "app/nested:1", index(t,
		entry{img: index(t, entries[:6]...)},
		entry{img: index(t, entries[6:]...)},
	))
	tests := []struct {
		name    string
		ref     string
		bytes   int64
		entries int
		want    string // error text; "" means success
		// noConfigs: the limit is known before any config is fetched.
		noConfigs bool
	}{
		{name: "within both limits", ref: tr.ref("app/wide:1"), bytes: 1 << 20, entries: 10},
		{name: "too many index entries", ref: tr.ref("app/wide:1"), bytes: 1 << 20, entries: 9, want: "lists 10 entries, the limit is 9 per image", noConfigs: true},
		{name: "nested indexes count together", ref: tr.ref("app/nested:1"), bytes: 1 << 20, entries: 9, want: "the limit is 9 per image"},
		{name: "too many bytes in all", ref: tr.ref("app/wide:1"), bytes: 4000, entries: 64, want: "limit of 4000 bytes per resolution"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, MaxResolutionBytes: tc.bytes, MaxIndexEntries: tc.entries})
			tr.reset()
			got, err := r.Resolve(t.Context(), tc.ref, teamA)
			if tc.want == "" {
				if err != nil || len(got) != 10 {
					t.Fatalf("Resolve = %d platforms, %v; want 10 platforms", len(got), err)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Kind != KindTooLarge || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Resolve error = %v, want kind %s mentioning %q", err, KindTooLarge, tc.want)
			}
			if n := tr.count(http.MethodGet, "/blobs/"); tc.noConfigs && n != 0 {
				t.Errorf("config GETs = %d past the entry limit, want 0", n)
			}
		})
	}
}

// TestOversizedLabelIgnored: an isa.request label over MaxLabelBytes is
// dropped unparsed and reported by size.
func TestOversizedLabelIgnored(t *testing.T) {
	tr := newTestRegistry(t)
	atLimit := strings.Repeat("a", MaxLabelBytes)
	tests := []struct {
		name  string
		label string
		want  Platform
	}{
		{name: "short label kept", label: "rv64gcv", want: Platform{OS: "linux", Architecture: "riscv64", ISARequest: "rv64gcv"}},
		{name: "label at the limit kept", label: atLimit, want: Platform{OS: "linux", Architecture: "riscv64", ISARequest: atLimit}},
		{name: "label over the limit ignored", label: atLimit + "b", want: Platform{OS: "linux", Architecture: "riscv64", LabelIgnored: MaxLabelBytes + 1}},
		{name: "32 KiB label ignored", label: strings.Repeat("x", 32<<10), want: Platform{OS: "linux", Architecture: "riscv64", LabelIgnored: 32 << 10}},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := fmt.Sprintf("app/label:%d", i)
			tr.pushImage(t, tag, image(t, "linux", "riscv64", "", map[string]string{isa.BareImageRequestLabel: tc.label}))
			got, err := r.Resolve(t.Context(), tr.ref(tag), teamA)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff([]Platform{tc.want}, got, ignoreDigest); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOversizedConfigNotFetched: a config over MaxConfigBytes (here a
// 1 MiB label) is never fetched: an index entry keeps its descriptor's
// platform, a single image fails as tooLarge.
func TestOversizedConfigNotFetched(t *testing.T) {
	tr := newTestRegistry(t)
	big := image(t, "linux", "riscv64", "", map[string]string{isa.ImageRequestLabel: strings.Repeat("x", 1<<20)})
	small := image(t, "linux", "amd64", "", map[string]string{isa.ImageRequestLabel: "x86-64-v2"})
	bigSize := configSize(t, big)
	tr.pushImage(t, "app/bigconfig:1", big)
	tr.pushIndex(t, "app/bigindex:1", index(t,
		entry{img: big, platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}},
		entry{img: small, platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
	))
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})

	tr.reset()
	_, err := r.Resolve(t.Context(), tr.ref("app/bigconfig:1"), teamA)
	var re *Error
	want := fmt.Sprintf("image config is %d bytes; the limit is %d bytes", bigSize, MaxConfigBytes)
	if !errors.As(err, &re) || re.Kind != KindTooLarge || !strings.Contains(err.Error(), want) {
		t.Errorf("single image: error = %v, want kind %s mentioning %q", err, KindTooLarge, want)
	}
	if n := tr.count(http.MethodGet, "/blobs/"); n != 0 {
		t.Errorf("single image: %d blob GETs, want 0", n)
	}

	tr.reset()
	got, err := r.Resolve(t.Context(), tr.ref("app/bigindex:1"), teamA)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	wantPlatforms := []Platform{
		{OS: "linux", Architecture: "riscv64", ConfigIgnored: bigSize},
		{OS: "linux", Architecture: "amd64", ISARequest: "x86-64-v2"},
	}
	if diff := cmp.Diff(wantPlatforms, got, ignoreDigest); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
	if n := tr.count(http.MethodGet, "/blobs/"); n != 1 {
		t.Errorf("index: %d blob GETs, want 1 (the small config only)", n)
	}
}

func configSize(t *testing.T, img v1.Image) int64 {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Size <= MaxConfigBytes {
		t.Fatalf("config of %d bytes is within the limit", m.Config.Size)
	}
	return m.Config.Size
}

// TestErrorMessagesAreSanitised: whatever a registry answers, an error
// keeps its kind, its status and a short printable line, never the body.
func TestErrorMessagesAreSanitised(t *testing.T) {
	tr := newTestRegistry(t)
	page := "boom\n<html><body>" + strings.Repeat("secret internal page ", 3000) + "</body></html>\n"
	tr.setFront(func(w http.ResponseWriter, r *http.Request) bool {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/v2/err500/"):
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, page)
			return true
		case strings.HasPrefix(p, "/v2/teapot/"):
			http.Error(w, "boom", http.StatusTeapot)
			return true
		case strings.HasPrefix(p, "/v2/codes/") && r.Method == http.MethodHead:
			// A registry without HEAD: the error comes from the GET.
			w.WriteHeader(http.StatusMethodNotAllowed)
			return true
		case strings.HasPrefix(p, "/v2/codes/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"line\nbreak \u001b[31m"},{"code":"not\na code","message":"x"}]}`)
			return true
		}
		return false
	})
	tests := []struct {
		name string
		ref  string
		kind string
		want string // the message after "kind: "
	}{
		{name: "500 with an HTML page", ref: tr.ref("err500/x:1"), kind: KindOther, want: "registry answered HTTP 500"},
		{name: "http.Error's trailing newline", ref: tr.ref("teapot/x:1"), kind: KindOther, want: "registry answered HTTP 418"},
		{name: "error codes kept, messages dropped", ref: tr.ref("codes/x:1"), kind: KindNotFound, want: "registry answered HTTP 404 MANIFEST_UNKNOWN"},
		{name: "invalid reference with control bytes", ref: "bad\nref\x1b:", kind: KindOther},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Resolve(t.Context(), tc.ref, teamA)
			var re *Error
			if !errors.As(err, &re) || re.Kind != tc.kind {
				t.Fatalf("Resolve error = %v, want kind %s", err, tc.kind)
			}
			msg := re.Err.Error()
			if tc.want != "" && msg != tc.want {
				t.Errorf("message = %q, want %q", msg, tc.want)
			}
			// One printable line within its bound is what sanitize.Line
			// leaves unchanged.
			if clean := sanitize.Line(msg, maxMessageBytes); clean != msg {
				t.Errorf("message %q is not one printable line of at most %d bytes (%q)", msg, maxMessageBytes, clean)
			}
			if clean := sanitize.Line(err.Error(), 1024); clean != err.Error() {
				t.Errorf("error %q is not one printable line of at most 1024 bytes (%q)", err, clean)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "boom") {
				t.Errorf("error %q echoes the response body", err)
			}
		})
	}
}
