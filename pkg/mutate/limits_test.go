package mutate

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ggcrmutate "github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// alternatives returns n distinct "|"-separated RISC-V alternatives.
func alternatives(n int) string {
	exts := []string{"zba", "zbb", "zbs", "zbc", "zfa", "zicond", "zicbom", "zicboz", "zihintpause", "zfh", "zvfh", "zkt", "zkn", "zks", "zvbb", "zvkt", "zcb", "zcmop"}
	var alts []string
	for k := range n {
		alts = append(alts, "rv64gc_"+exts[k%len(exts)])
	}
	return strings.Join(alts, "|")
}

// TestHandleLimits: oversized request keys and pods with too many images
// are denied before anything is parsed or resolved, with the limit named.
func TestHandleLimits(t *testing.T) {
	huge := strings.Repeat("rv64gc_", 3<<20/7) + "zba"
	manyImages := func(n int) []string {
		var out []string
		for k := range n {
			out = append(out, "img"+strconv.Itoa(k)+":1")
		}
		return out
	}
	tests := []struct {
		name       string
		pod        podSpec
		wantDenied string // substring; empty: allowed
		wantCalls  int64
	}{
		{
			name:       "3 MiB bare annotation",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, huge), images: []string{"riscv:1"}},
			wantDenied: "annotation isa.request is " + strconv.Itoa(len(huge)) + " bytes; the limit is 1024 bytes: ",
		},
		{
			name:       "3 MiB prefixed annotation",
			pod:        podSpec{annotations: ann(isa.RequestAnnotation, huge), images: []string{"riscv:1"}},
			wantDenied: "annotation " + isa.RequestAnnotation + " is " + strconv.Itoa(len(huge)) + " bytes; the limit is 1024 bytes",
		},
		{
			name:       "oversized label ARCH, even beside a valid annotation",
			pod:        podSpec{annotations: ann(isa.RequestAnnotation, "rv64gc"), labels: ann(isa.RequestLabel, huge)},
			wantDenied: "label ARCH is " + strconv.Itoa(len(huge)) + " bytes; the limit is 1024 bytes",
		},
		{
			name:       "oversized qemu annotation",
			pod:        podSpec{annotations: ann(isa.QEMUAnnotation, huge)},
			wantDenied: "annotation " + isa.QEMUAnnotation + " is ",
		},
		{
			name:       "17 alternatives",
			pod:        podSpec{annotations: ann(isa.RequestAnnotation, alternatives(17)), images: []string{"riscv:1"}},
			wantDenied: "annotation " + isa.RequestAnnotation + " has 17 alternatives; the limit is 16",
		},
		{
			name:       "17 empty alternatives are counted before parsing",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, strings.Repeat("|", 16))},
			wantDenied: "annotation isa.request has 17 alternatives; the limit is 16",
		},
		{
			name:      "16 alternatives",
			pod:       podSpec{annotations: ann(isa.RequestAnnotation, alternatives(16)), images: []string{"riscv:1"}},
			wantCalls: 1,
		},
		{
			name:       "65 distinct images: denied before any lookup",
			pod:        podSpec{images: manyImages(65)},
			wantDenied: "the pod names more than 64 distinct container images; the limit is 64",
		},
		{
			name:      "64 distinct images, repeated",
			pod:       podSpec{images: append(manyImages(64), manyImages(64)...)},
			wantCalls: 64,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &fakeResolver{images: testImages()}
			m := NewPodMutator(res, inventory.NewStatic(testnodes.Paper(t)), Options{})
			resp := m.Handle(t.Context(), admissionRequest(t, tc.pod.pod()))
			if tc.wantDenied == "" {
				if !resp.Allowed {
					t.Fatalf("denied: %s", resp.Result.Message)
				}
			} else {
				if resp.Allowed {
					t.Fatalf("allowed, want denied with %q", tc.wantDenied)
				}
				if !strings.Contains(resp.Result.Message, tc.wantDenied) {
					t.Errorf("denial %.300q does not contain %q", resp.Result.Message, tc.wantDenied)
				}
				if len(resp.Result.Message) > 2*engine.MaxRequestBytes {
					t.Errorf("denial is %d bytes, want it bounded", len(resp.Result.Message))
				}
			}
			if got := res.calls.Load(); got != tc.wantCalls {
				t.Errorf("resolver calls = %d, want %d", got, tc.wantCalls)
			}
		})
	}
}

// printableLine fails t unless every text is one line of printable,
// valid UTF-8 text, as the API server passes it on.
func printableLine(t *testing.T, max int, warnings []string) {
	t.Helper()
	for _, w := range warnings {
		if !utf8.ValidString(w) || len(w) > max {
			t.Errorf("text %q is not valid UTF-8 or is longer than %d bytes", w, max)
		}
		for _, r := range w {
			if !unicode.IsPrint(r) {
				t.Errorf("text %q has the non-printable %U", w, r)
			}
		}
	}
}

// hostileRegistry is an in-process registry with app:biglabel (a 1 MiB
// label: a config the resolver does not fetch), app:bigindex (the same
// image as an index entry), app:longlabel (a 1 KiB label, dropped by the
// resolver) and app:both (the reverse-DNS label and a
// different bare one), plus a second server answering every request with
// 500 "boom\n".
func hostileRegistry(t testing.TB) (host, broken string) {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	write := func(tag string, labels map[string]string) v1.Image {
		img, err := ggcrmutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "riscv64", Config: v1.Config{Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(host+"/app:"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		return img
	}
	big := write("biglabel", map[string]string{isa.ImageRequestLabel: strings.Repeat("rv64gc|", 1<<20/7)})
	write("longlabel", map[string]string{isa.ImageRequestLabel: strings.Repeat("rv64gc|", 1<<10/7)})
	write("both", map[string]string{isa.ImageRequestLabel: "rv64imfdv", isa.BareImageRequestLabel: "rv64gc"})
	idx := ggcrmutate.AppendManifests(empty.Index, ggcrmutate.IndexAddendum{Add: big, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}}})
	ref, err := name.ParseReference(host+"/app:bigindex", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError) // "boom\n"
	}))
	t.Cleanup(bad.Close)
	return host, strings.TrimPrefix(bad.URL, "http://")
}

// TestHandleHostileRegistry: through the real resolver, an oversized image
// label is ignored with a warning, the reverse-DNS image label wins, and a
// registry's error body reaches the user as one printable line.
func TestHandleHostileRegistry(t *testing.T) {
	host, broken := hostileRegistry(t)
	nodes := testnodes.Paper(t)
	res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host, broken}})
	m := NewPodMutator(res, inventory.NewStatic(nodes), Options{})
	tests := []struct {
		name          string
		pod           podSpec
		wantWarnings  []string // substrings, in order
		wantPlacement map[string]int32
	}{
		{
			name:         "1 KiB image label ignored with a warning",
			pod:          podSpec{images: []string{host + "/app:longlabel"}},
			wantWarnings: []string{`label io.isamatch.isa.request ignored: it is 1022 bytes; the limit is 256 bytes`},
		},
		{
			name:         "1 MiB image config not fetched",
			pod:          podSpec{images: []string{host + "/app:biglabel"}},
			wantWarnings: []string{`platforms unknown (tooLarge: registry response too large: image config is 1048732 bytes; the limit is 65536 bytes)`},
		},
		{
			name:         "1 MiB image config in an index: the platform without the label",
			pod:          podSpec{images: []string{host + "/app:bigindex"}},
			wantWarnings: []string{`config of riscv64 not read: it is 1048732 bytes; the limit is 65536 bytes`},
		},
		{
			name:          "reverse-DNS image label over the bare one",
			pod:           podSpec{images: []string{host + "/app:both"}},
			wantPlacement: map[string]int32{"node5": 100, "node6": 100, "node4": 40},
		},
		{
			name:         "500 with a newline in the body",
			pod:          podSpec{images: []string{broken + "/app:1"}},
			wantWarnings: []string{"platforms unknown"},
		},
		{
			name:         "control characters in the image reference",
			pod:          podSpec{images: []string{"app\x1b[31m\u202e:1\u0007"}},
			wantWarnings: []string{"isamatch: image "},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod.pod()
			pod.Name = "p\n\x1bname"
			req := admissionRequest(t, pod)
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			if len(resp.Warnings) != len(tc.wantWarnings) {
				t.Fatalf("warnings = %q, want %d matching %q", resp.Warnings, len(tc.wantWarnings), tc.wantWarnings)
			}
			for k, s := range tc.wantWarnings {
				if !strings.Contains(resp.Warnings[k], s) {
					t.Errorf("warning %d = %q, want it to contain %q", k, resp.Warnings[k], s)
				}
			}
			printableLine(t, maxWarning, resp.Warnings)
			got := applyPatch(t, req, resp)
			stored(t, got)
			printableLine(t, maxAnnotation, []string{m.Explain(t.Context(), got)})
			if tc.wantPlacement != nil {
				if diff := cmp.Diff(tc.wantPlacement, testnodes.Placement(got, nodes)); diff != "" {
					t.Errorf("placement (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// BenchmarkHostileRequest is the handler time of hostile pods: a 3 MiB
// isa.request annotation (denied before parsing), and an image whose label
// is 1 MiB (its config is never fetched). Each must stay well under 5 ms per admission.
func BenchmarkHostileRequest(b *testing.B) {
	host, _ := hostileRegistry(b)
	nodes := testnodes.Paper(b)
	huge := ann(isa.BareRequestAnnotation, strings.Repeat("rv64gc_", 3<<20/7)+"zba")
	for _, bc := range []struct {
		name string
		res  ImageResolver
		pod  podSpec
	}{
		{"3MiB annotation", &fakeResolver{images: testImages()}, podSpec{annotations: huge, images: []string{"riscv:1"}}},
		{"1MiB image label", registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}}), podSpec{images: []string{host + "/app:biglabel"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := NewPodMutator(bc.res, inventory.NewStatic(nodes), Options{})
			req := admissionRequest(b, bc.pod.pod())
			for b.Loop() {
				m.Handle(b.Context(), req)
			}
		})
	}
	b.Run("1MiB image label, cold", func(b *testing.B) {
		req := admissionRequest(b, podSpec{images: []string{host + "/app:biglabel"}}.pod())
		for b.Loop() {
			b.StopTimer()
			m := NewPodMutator(registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}}), inventory.NewStatic(nodes), Options{})
			b.StartTimer()
			m.Handle(b.Context(), req)
		}
	})
}

// BenchmarkHostileLabel compares, in one run, the handler time of a pod
// with a 3 MiB ARCH label (denied by precheck before the pod is decoded)
// with that of a normal pod of the same image: hostile/normal is the
// ratio of their times.
func BenchmarkHostileLabel(b *testing.B) {
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(b)), Options{})
	normal := admissionRequest(b, podSpec{labels: ann(isa.RequestLabel, "rv64gc"), images: []string{"riscv:1"}}.pod())
	hostile := admissionRequest(b, podSpec{labels: ann(isa.RequestLabel, strings.Repeat("rv64gc_", 3<<20/7)), images: []string{"riscv:1"}}.pod())
	if resp := m.Handle(b.Context(), hostile); resp.Allowed {
		b.Fatal("the 3 MiB ARCH label was allowed")
	}
	var tn, th time.Duration
	for b.Loop() {
		start := time.Now()
		m.Handle(b.Context(), normal)
		mid := time.Now()
		m.Handle(b.Context(), hostile)
		tn, th = tn+mid.Sub(start), th+time.Since(mid)
	}
	b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "normal-ns/op")
	b.ReportMetric(float64(th.Nanoseconds())/float64(b.N), "hostile-ns/op")
	b.ReportMetric(float64(th)/float64(tn), "hostile/normal")
}

// TestPrecheck: the walk of a large raw pod finds an oversized request
// annotation or label in its metadata, and nothing anywhere else.
func TestPrecheck(t *testing.T) {
	// pod is a raw pod as the API server writes it, padded over largePod
	// by an environment variable; meta is inside metadata.
	pod := func(meta string) string {
		return `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"` + meta + `},` +
			`"spec":{"containers":[{"name":"c","image":"app:1","env":[{"name":"PAD","value":"` + strings.Repeat("x", largePod) + `"}]}]}}`
	}
	obj := func(kv ...string) string {
		var b strings.Builder
		for i := 0; i < len(kv); i += 2 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + kv[i] + `":"` + kv[i+1] + `"`)
		}
		return "{" + b.String() + "}"
	}
	big := strings.Repeat("a", 2*engine.MaxRequestBytes)
	huge := strings.Repeat("rv64gc_", 3<<20/7)
	tests := []struct {
		name, raw, want string
	}{
		{name: "small object: not scanned", raw: `{"metadata":{"annotations":` + obj("isa.request", big) + `}}`},
		{name: "bare annotation", raw: pod(`,"annotations":` + obj("a", "b", "isa.request", big)), want: "annotation isa.request is 2048 bytes; the limit is 1024 bytes"},
		{name: "prefixed qemu annotation", raw: pod(`,"annotations":` + obj(isa.QEMUAnnotation, big)), want: "annotation " + isa.QEMUAnnotation + " is 2048 bytes"},
		{name: "3 MiB ARCH label", raw: pod(`,"labels":` + obj("app", "x", isa.RequestLabel, huge)), want: "label ARCH is " + strconv.Itoa(len(huge)) + " bytes; the limit is 1024 bytes"},
		{name: "QEMU label with too many alternatives", raw: pod(`,"labels":` + obj(isa.QEMULabel, strings.Repeat("rv64gc|", engine.MaxAlternatives)+"rv64gc")), want: "label QEMU has 17 alternatives; the limit is 16"},
		{name: "escaped label key", raw: pod(`,"labels":{"\u0041RCH":"` + big + `"}`), want: "label ARCH is 2048 bytes"},
		{name: "metadata after spec", raw: `{"spec":{"containers":[{"name":"` + strings.Repeat("x", largePod) + `"}]},"metadata":{"labels":` + obj(isa.RequestLabel, big) + `}}`, want: "label ARCH is 2048 bytes"},
		{name: "whitespace between tokens", raw: pod(` , "labels" : { "x" : [ 1 , true , {"y":null} ] , "ARCH" : "` + big + `" } `), want: "label ARCH is 2048 bytes"},
		{name: "ARCH as an annotation", raw: pod(`,"annotations":` + obj(isa.RequestLabel, big))},
		{name: "isa.request as a label", raw: pod(`,"labels":` + obj(isa.BareRequestAnnotation, big))},
		{name: "ARCH in the node selector", raw: pod(``)[:len(pod(``))-2] + `,"nodeSelector":` + obj(isa.RequestLabel, big) + `}}`},
		{name: "key inside a string value", raw: pod(`,"annotations":` + obj("x", `\"isa.request\":\"`+big))},
		{name: "escaped value under the limit after decoding", raw: pod(`,"labels":` + obj(isa.RequestLabel, strings.Repeat(`\"`, engine.MaxRequestBytes/2)))},
		{name: "escaped value over the limit after decoding", raw: pod(`,"labels":` + obj(isa.RequestLabel, strings.Repeat(`\"`, 1500))), want: "label ARCH is 1500 bytes"},
		{name: "escaped value plainly over", raw: pod(`,"annotations":` + obj("isa.request", strings.Repeat(`\u0001`, 2*engine.MaxRequestBytes))), want: "annotation isa.request is more than 2048 bytes"},
		{name: "small values", raw: pod(`,"labels":` + obj(isa.RequestLabel, "rv64gc") + `,"annotations":` + obj("isa.request", "rv64gc"))},
		{name: "cut off in the value", raw: pod(`,"labels":` + obj(isa.RequestLabel, huge))[:2*largePod], want: "label ARCH is"},
		{name: "cut off in a key", raw: pod(`,"labels":` + obj(isa.RequestLabel, "rv64gc", strings.Repeat("k", 2*largePod), "v"))[:largePod+100]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := precheck([]byte(tc.raw))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("precheck = %.120q, want %q", got, tc.want)
			}
		})
	}
}
