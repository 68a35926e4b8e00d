package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// helloApp is a tiny real program built through the same path as the
// labeler and the webhook.
var helloApp = App{Name: "hello", Package: "./hack/images/testdata/hello", User: nonrootID, WorkingDir: "/home/nonroot"}

// testBundle stands in for the host's CA bundle, so the test can check it
// arrives byte for byte.
const testBundle = "-----BEGIN CERTIFICATE-----\nnot a real certificate, a marker\n-----END CERTIFICATE-----\n"

func testConfig(t *testing.T) buildConfig {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return buildConfig{
		ModuleDir: root,
		WorkDir:   t.TempDir(),
		Platforms: supportedPlatforms,
		Epoch:     time.Unix(1700000000, 0).UTC(),
		CABundle:  []byte(testBundle),
		Source:    "https://example.com/isamatch",
		Revision:  "0123456789abcdef",
		Version:   "v9.9.9",
		Progress:  io.Discard,
	}
}

// startRegistry serves an in-process registry and returns its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	// No credentials: authn.DefaultKeychain finds an empty docker config.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	return strings.TrimPrefix(srv.URL, "http://")
}

type tarEntry struct {
	typeflag byte
	mode     int64
	uid, gid int
	modTime  time.Time
	data     []byte
}

// layerFiles reads the only layer of img.
func layerFiles(t *testing.T, img v1.Image) map[string]tarEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("got %d layers, want 1", len(layers))
	}
	return tarFiles(t, layers[0])
}

// tarFiles reads the entries of one layer.
func tarFiles(t *testing.T, layer v1.Layer) map[string]tarEntry {
	t.Helper()
	if mt, err := layer.MediaType(); err != nil || mt != types.OCILayer {
		t.Errorf("layer media type = %q, %v; want %q", mt, err, types.OCILayer)
	}
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]tarEntry{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = tarEntry{typeflag: hdr.Typeflag, mode: hdr.Mode, uid: hdr.Uid, gid: hdr.Gid, modTime: hdr.ModTime, data: data}
	}
	return files
}

var wantMachine = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"riscv64": elf.EM_RISCV,
}

func TestBuildPushReadBack(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t)
	idx, err := buildIndex(ctx, cfg, helloApp)
	if err != nil {
		t.Fatal(err)
	}
	host := startRegistry(t)
	o := options{Repo: host + "/isamatch", Tag: "v9.9.9", Push: true}
	pub, err := newPublisher(o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pub.publish(ctx, helloApp, idx)
	if err != nil {
		t.Fatal(err)
	}

	ref, err := name.ParseReference(host + "/isamatch/hello:v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("read back %s: %v", ref, err)
	}
	digest, err := got.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if digest != res.Digest {
		t.Errorf("registry has %s, publish reported %s", digest, res.Digest)
	}
	if err := validate.Index(got); err != nil {
		t.Errorf("pushed index does not validate: %v", err)
	}
	im, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type = %q, want %q", im.MediaType, types.OCIImageIndex)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64", "linux/riscv64"}, platforms); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("v9.9.9", im.Annotations[labelVersion]); diff != "" {
		t.Errorf("index version annotation (-want +got):\n%s", diff)
	}

	for _, d := range im.Manifests {
		t.Run(d.Platform.String(), func(t *testing.T) {
			img, err := got.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if d.MediaType != types.OCIManifestSchema1 {
				t.Errorf("manifest media type = %q, want %q", d.MediaType, types.OCIManifestSchema1)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			type summary struct {
				OS, Architecture string
				Created          time.Time
				Entrypoint       []string
				User, WorkingDir string
				Labels           map[string]string
			}
			want := summary{
				OS: "linux", Architecture: d.Platform.Architecture,
				Created:    cfg.Epoch,
				Entrypoint: []string{"/hello"},
				User:       "65532", WorkingDir: "/home/nonroot",
				Labels: map[string]string{
					labelSource:   "https://example.com/isamatch",
					labelRevision: "0123456789abcdef",
					labelVersion:  "v9.9.9",
					labelTitle:    "isamatch-hello",
				},
			}
			gotSummary := summary{
				OS: cf.OS, Architecture: cf.Architecture, Created: cf.Created.UTC(),
				Entrypoint: cf.Config.Entrypoint, User: cf.Config.User, WorkingDir: cf.Config.WorkingDir,
				Labels: cf.Config.Labels,
			}
			if diff := cmp.Diff(want, gotSummary); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}

			files := layerFiles(t, img)
			bin, ok := files["hello"]
			if !ok {
				t.Fatalf("layer has no /hello; entries: %v", keys(files))
			}
			if bin.typeflag != tar.TypeReg || bin.mode != 0o755 {
				t.Errorf("/hello: type %q mode %#o, want a regular file with mode 0755", bin.typeflag, bin.mode)
			}
			f, err := elf.NewFile(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatalf("/hello is not an ELF file: %v", err)
			}
			if f.Machine != wantMachine[d.Platform.Architecture] {
				t.Errorf("/hello ELF machine = %v, want %v", f.Machine, wantMachine[d.Platform.Architecture])
			}
			if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") ||
				!strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
				t.Errorf("no nonroot user: /etc/passwd %q, /etc/group %q", files["etc/passwd"].data, files["etc/group"].data)
			}
			if diff := cmp.Diff(testBundle, string(files[caBundlePath].data)); diff != "" {
				t.Errorf("/%s (-want +got):\n%s", caBundlePath, diff)
			}
			if home := files["home/nonroot/"]; home.typeflag != tar.TypeDir || home.uid != 65532 || home.gid != 65532 {
				t.Errorf("/home/nonroot: type %q owner %d:%d, want a directory owned by 65532:65532", home.typeflag, home.uid, home.gid)
			}
			for n, e := range files {
				if !e.modTime.Equal(cfg.Epoch) {
					t.Errorf("%s: mtime %s, want SOURCE_DATE_EPOCH %s", n, e.modTime.UTC(), cfg.Epoch)
				}
			}
		})
	}
}

func keys(m map[string]tarEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBuildIsDeterministic(t *testing.T) {
	ctx := t.Context()
	digest := func(t *testing.T, cfg buildConfig) v1.Hash {
		t.Helper()
		idx, err := buildIndex(ctx, cfg, helloApp)
		if err != nil {
			t.Fatal(err)
		}
		h, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := digest(t, testConfig(t))
	tests := []struct {
		name   string
		change func(*buildConfig)
		same   bool
	}{
		{name: "rebuild in a fresh work directory", change: func(*buildConfig) {}, same: true},
		{name: "another SOURCE_DATE_EPOCH", change: func(c *buildConfig) { c.Epoch = c.Epoch.Add(time.Hour) }},
		{name: "another revision", change: func(c *buildConfig) { c.Revision = "fedcba9876543210" }},
		{name: "another CA bundle", change: func(c *buildConfig) { c.CABundle = append(c.CABundle, '\n') }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			tc.change(&cfg)
			got := digest(t, cfg)
			if (got == first) != tc.same {
				t.Errorf("digest %s, first build %s; want same=%v", got, first, tc.same)
			}
		})
	}
}

func TestOCILayout(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t)
	cfg.Platforms = []Platform{{OS: "linux", Arch: "riscv64"}, {OS: "linux", Arch: "arm64"}}
	dir := filepath.Join(t.TempDir(), "oci")
	o := options{Repo: "registry.example.com/isamatch", Tag: "v1", OCILayout: dir}
	pub, err := newPublisher(o)
	if err != nil {
		t.Fatal(err)
	}
	// Twice: the second write replaces the first entry of the same name.
	var res result
	for range 2 {
		idx, err := buildIndex(ctx, cfg, helloApp)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = pub.publish(ctx, helloApp, idx); err != nil {
			t.Fatal(err)
		}
	}

	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("layout.ImageIndexFromPath: %v", err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		RefName string
		Digest  v1.Hash
	}
	var entries []entry
	for _, d := range tm.Manifests {
		entries = append(entries, entry{RefName: d.Annotations[refNameAnnotation], Digest: d.Digest})
	}
	if diff := cmp.Diff([]entry{{RefName: "registry.example.com/isamatch/hello:v1", Digest: res.Digest}}, entries); diff != "" {
		t.Fatalf("index.json entries (-want +got):\n%s", diff)
	}
	child, err := top.ImageIndex(res.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(child); err != nil {
		t.Errorf("layout index does not validate: %v", err)
	}
	cm, err := child.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range cm.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/riscv64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

func TestBuildError(t *testing.T) {
	cfg := testConfig(t)
	cfg.Platforms = supportedPlatforms[:1]
	_, err := buildIndex(t.Context(), cfg, App{Name: "missing", Package: "./hack/images/testdata/nosuchpackage"})
	if err == nil || !strings.Contains(err.Error(), "go build ./hack/images/testdata/nosuchpackage for linux/amd64") {
		t.Errorf("buildIndex of a missing package: error %v, want one naming the package and platform", err)
	}
}

func TestBuildAndPublish(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.crt")
	if err := os.WriteFile(bundle, []byte(testBundle), 0o644); err != nil {
		t.Fatal(err)
	}
	base := options{
		Repo: "registry.example.com/isamatch", Tag: "v2", Platforms: supportedPlatforms[2:],
		Apps: []App{helloApp}, CABundle: bundle, Source: "https://example.com/i",
		Epoch: time.Unix(0, 0).UTC(),
	}
	tests := []struct {
		name    string
		change  func(*options)
		wantOut []string
		wantErr string
		check   func(t *testing.T, o options)
	}{
		{
			name:   "oci layout",
			change: func(o *options) { o.OCILayout = filepath.Join(dir, "oci") },
			wantOut: []string{
				"written to the OCI layout " + filepath.Join(dir, "oci") + " registry.example.com/isamatch/hello:v2@sha256:",
				"  linux/riscv64  sha256:",
				"  - name: ghcr.io/isamatch/hello\n    newName: registry.example.com/isamatch/hello\n    digest: sha256:",
			},
			check: checkRevision,
		},
		{
			name:    "build only",
			change:  func(*options) {},
			wantOut: []string{"built (not pushed; --push or --oci-layout DIR to publish) registry.example.com/isamatch/hello:v2@sha256:"},
		},
		{
			name:    "missing CA bundle",
			change:  func(o *options) { o.CABundle = filepath.Join(dir, "missing.crt") },
			wantErr: "or pass --ca-bundle FILE",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.change(&o)
			var stdout bytes.Buffer
			err := buildAndPublish(t.Context(), o, &stdout, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), o.CABundle) {
					t.Fatalf("error %v, want one naming %s and containing %q", err, o.CABundle, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.wantOut {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("output does not contain %q:\n%s", s, stdout.String())
				}
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// checkRevision checks that the image index in the OCI layout carries the
// checkout's revision.
func checkRevision(t *testing.T, o options) {
	t.Helper()
	head, err := exec.CommandContext(t.Context(), "git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout (%v): revision label not checked", err)
	}
	top, err := layout.ImageIndexFromPath(o.OCILayout)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil || len(tm.Manifests) != 1 {
		t.Fatalf("layout index: %v, %d entries, want 1", err, len(tm.Manifests))
	}
	child, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := child.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(head))
	if rev := cm.Annotations[labelRevision]; rev != want && rev != want+"-dirty" {
		t.Errorf("revision annotation %q, want %q or %q", rev, want, want+"-dirty")
	}
}
