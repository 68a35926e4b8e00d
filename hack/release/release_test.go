package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	spdxjson "github.com/spdx/tools-golang/json"
	"golang.org/x/mod/modfile"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/internal/testbed"
)

const testVersion = "v0.0.1-test"

// repoRoot is the repository root (config/, charts/, hack/images).
var repoRoot = filepath.Join("..", "..")

func TestParseArgs(t *testing.T) {
	ok := []string{"--repo", "reg.example/isamatch", "--version", "v1.2.3", "--oci-layout", "l", "--dist", "d"}
	with := func(extra ...string) []string { return append(slices.Clone(ok), extra...) }
	tests := []struct {
		name    string
		args    []string
		env     string
		wantErr string
	}{
		{name: "all given", args: ok},
		{name: "pre-release", args: with("--version", "v1.2.3-rc.1")},
		{name: "no repo", args: []string{"--version", "v1.2.3", "--oci-layout", "l", "--dist", "d"}, wantErr: "--repo is required"},
		{name: "version without v", args: with("--version", "1.2.3"), wantErr: `--version "1.2.3" is not a release version`},
		{name: "version with a leading zero", args: with("--version", "v1.02.3"), wantErr: "not a release version"},
		{name: "repo in capitals", args: with("--repo", "Reg.Example/ISAMATCH"), wantErr: `--repo "Reg.Example/ISAMATCH"`},
		{name: "dist at the root", args: with("--dist", "/"), wantErr: "--dist / would be emptied"},
		{name: "bad epoch", args: ok, env: "yesterday", wantErr: `SOURCE_DATE_EPOCH="yesterday"`},
		{name: "stray argument", args: with("push"), wantErr: `unexpected argument "push"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("release", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			_, err := parseArgs(fs, tc.args, func(string) string { return tc.env })
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("parseArgs(%q): %v", tc.args, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("parseArgs(%q) = %v, want an error mentioning %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

// TestReleaseToARegistry is `make release` for this machine's platform,
// labeler and webhook, into a real registry (Debian's docker-registry, TLS
// and basic auth): it checks what a user verifies (docs/install.md,
// "Verify"): the tags resolve to the digests dist/ names, each index has
// its SBOM as a referrer and the SBOM describes the binaries in the images,
// SHA256SUMS holds, install.yaml, dist/config and the chart pin every image
// by digest; and a second release of the same layout writes the same files.
func TestReleaseToARegistry(t *testing.T) {
	reg, err := testbed.StartRegistry(t.Context(), testbed.RegistryOptions{})
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	dockerConfig := t.TempDir()
	if err := os.WriteFile(filepath.Join(dockerConfig, "config.json"), reg.DockerConfigJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dockerConfig)

	repo := reg.Host + "/isamatch"
	oci := filepath.Join(t.TempDir(), "oci")
	platform := "linux/" + runtime.GOARCH
	cmd := exec.CommandContext(t.Context(), "go", "run", "./hack/images", "--repo", repo, "--tag", testVersion,
		"--oci-layout", oci, "--only", "labeler,webhook", "--platforms", platform)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/images: %v\n%s", err, out)
	}

	// What hack/plugin writes (its own test builds them): files that join
	// dist/ as they are.
	plugin := t.TempDir()
	pluginFiles := map[string]string{"kubectl-isa_linux_amd64.tar.gz": "an archive", "kubectl-isa.krew.yaml": "a manifest"}
	for f, data := range pluginFiles {
		if err := os.WriteFile(filepath.Join(plugin, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dist := filepath.Join(t.TempDir(), "dist")
	args := []string{"--repo", repo, "--version", testVersion, "--oci-layout", oci, "--dist", dist, "--root", repoRoot, "--ca", reg.CAFile, "--plugin", plugin}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("release exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	t.Logf("release:\n%s", stdout.String())

	lp, err := layout.FromPath(oci)
	if err != nil {
		t.Fatal(err)
	}
	opts := reg.RemoteOptions(t.Context())
	digests := map[string]string{}
	for _, app := range []string{"labeler", "webhook"} {
		t.Run(app, func(t *testing.T) {
			tag, err := name.NewTag(repo + "/" + app + ":" + testVersion)
			if err != nil {
				t.Fatal(err)
			}
			desc, err := remote.Head(tag, opts...)
			if err != nil {
				t.Fatalf("the tag does not resolve: %v", err)
			}
			digests[app] = desc.Digest.String()
			built := layoutIndex(t, lp, tag.String())
			if want, _ := built.Digest(); desc.Digest != want {
				t.Errorf("%s is %s in the registry, %s as hack/images built it", tag, desc.Digest, want)
			}
			images, err := os.ReadFile(filepath.Join(dist, imagesFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(images), tag.String()+"@"+desc.Digest.String()) {
				t.Errorf("%s does not name %s@%s:\n%s", imagesFile, tag, desc.Digest, images)
			}

			// The SBOM, found the way a user finds it: the referrers of
			// the index digest.
			refs, err := remote.Referrers(tag.Context().Digest(desc.Digest.String()), opts...)
			if err != nil {
				t.Fatalf("referrers of %s: %v", desc.Digest, err)
			}
			rm, err := refs.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			var sboms []v1.Descriptor
			for _, d := range rm.Manifests {
				if d.ArtifactType == sbomMediaType {
					sboms = append(sboms, d)
				}
			}
			if len(sboms) != 1 {
				t.Fatalf("referrers of %s: %+v, want one %s", desc.Digest, rm.Manifests, sbomMediaType)
			}
			art, err := remote.Image(tag.Context().Digest(sboms[0].Digest.String()), opts...)
			if err != nil {
				t.Fatal(err)
			}
			layers, err := art.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("the SBOM artifact has %d layers (%v), want 1", len(layers), err)
			}
			rc, err := layers[0].Compressed()
			if err != nil {
				t.Fatal(err)
			}
			pushed, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			inDist, err := os.ReadFile(filepath.Join(dist, sbomDir, app+".spdx.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pushed, inDist) {
				t.Errorf("the SBOM in the registry differs from dist/%s/%s.spdx.json", sbomDir, app)
			}
			checkSBOM(t, pushed, app, built)
		})
	}

	checkChecksums(t, dist)
	sums, err := os.ReadFile(filepath.Join(dist, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	for f, data := range pluginFiles {
		if got, err := os.ReadFile(filepath.Join(dist, f)); err != nil || string(got) != data {
			t.Errorf("dist/%s = %q, %v; want the plugin's %q", f, got, err, data)
		}
		if !strings.Contains(string(sums), "  "+f+"\n") {
			t.Errorf("%s does not list %s:\n%s", checksumsFile, f, sums)
		}
	}

	// install.yaml, dist/config and the chart name the pushed digests and
	// no placeholder.
	imageLine := regexp.MustCompile(`(?m)^\s*-?\s*image: "?([^"\s]+)"?\s*$`)
	install, err := os.ReadFile(filepath.Join(dist, installFile))
	if err != nil {
		t.Fatal(err)
	}
	kust, err := manifests.RenderYAML(t.Context(), t.TempDir(), filepath.Join(dist, configDir))
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Log(err)
	} else if err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{installFile: string(install), "kubectl kustomize dist/config": string(kust)} {
		if text == "" {
			continue
		}
		var got []string
		for _, m := range imageLine.FindAllStringSubmatch(text, -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		want := []string{repo + "/labeler@" + digests["labeler"], repo + "/webhook@" + digests["webhook"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: images (-want +got):\n%s", file, diff)
		}
	}
	ch, err := loader.Load(filepath.Join(dist, "isamatch-"+strings.TrimPrefix(testVersion, "v")+".tgz"))
	if err != nil {
		t.Fatalf("the chart in dist/: %v", err)
	}
	if ch.Metadata.AppVersion != testVersion {
		t.Errorf("chart appVersion %q, want %q", ch.Metadata.AppVersion, testVersion)
	}
	for _, app := range []string{"labeler", "webhook"} {
		img, _ := ch.Values["images"].(map[string]any)[app].(map[string]any)
		if img["digest"] != digests[app] || img["repository"] != repo+"/"+app {
			t.Errorf("chart values images.%s = %v, want %s@%s", app, img, repo+"/"+app, digests[app])
		}
	}

	// The chart is in the registry too, where images.txt says.
	images, err := os.ReadFile(filepath.Join(dist, imagesFile))
	if err != nil {
		t.Fatal(err)
	}
	chartRef := regexp.MustCompile(`(?m)^oci://(\S+):(\S+)@(sha256:[0-9a-f]{64})$`).FindStringSubmatch(string(images))
	if chartRef == nil {
		t.Fatalf("%s names no chart:\n%s", imagesFile, images)
	}
	chartTag, err := name.NewTag(chartRef[1] + ":" + chartRef[2])
	if err != nil {
		t.Fatal(err)
	}
	if desc, err := remote.Head(chartTag, opts...); err != nil || desc.Digest.String() != chartRef[3] {
		t.Errorf("the chart %s in the registry: %v, %v; want digest %s", chartTag, desc, err, chartRef[3])
	}

	// The same layout released again gives the same files, byte for byte.
	dist2 := filepath.Join(t.TempDir(), "dist")
	args[7] = dist2
	if code := run(args, io.Discard, &stderr); code != 0 {
		t.Fatalf("second release exited %d: %s", code, stderr.String())
	}
	a, _ := os.ReadFile(filepath.Join(dist, checksumsFile))
	b, _ := os.ReadFile(filepath.Join(dist2, checksumsFile))
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("a second release of the same layout differs (-first +second):\n%s", diff)
	}
}

// layoutIndex is the image index named ref in the OCI layout.
func layoutIndex(t *testing.T, lp layout.Path, ref string) v1.ImageIndex {
	t.Helper()
	root, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Annotations[refNameAnnotation] == ref {
			idx, err := root.ImageIndex(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return idx
		}
	}
	t.Fatalf("no %s in the layout", ref)
	return nil
}

// checkSBOM: the document parses as SPDX, describes the image index, has
// one package per platform whose SHA-256 is that of the binary in the
// image, and lists the modules the binary links at the versions go.mod
// requires.
func checkSBOM(t *testing.T, data []byte, app string, idx v1.ImageIndex) {
	t.Helper()
	doc, err := spdxjson.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the SBOM is not SPDX JSON: %v", err)
	}
	digest, _ := idx.Digest()
	pkgs := map[string]string{} // name -> version
	sums := map[string]string{} // name -> sha256
	for _, p := range doc.Packages {
		pkgs[p.PackageName] = p.PackageVersion
		for _, c := range p.PackageChecksums {
			if c.Algorithm == "SHA256" {
				sums[p.PackageName] = c.Value
			}
		}
	}
	if len(doc.Relationships) == 0 || doc.Relationships[0].Relationship != "DESCRIBES" {
		t.Errorf("the SBOM's first relationship is not DESCRIBES")
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(slices.Collect(maps.Values(sums)), digest.Hex) {
		t.Errorf("no package of the SBOM has the index digest %s", digest)
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		bin, err := binaryOf(img, app)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(bin)
		pkg := "/" + app + " (" + d.Platform.String() + ")"
		if sums[pkg] != hex.EncodeToString(sum[:]) {
			t.Errorf("package %q has SHA-256 %q, the binary in the image %x", pkg, sums[pkg], sum)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mf.Require {
		if r.Mod.Path == "sigs.k8s.io/controller-runtime" || r.Mod.Path == "k8s.io/client-go" {
			if got := pkgs[r.Mod.Path]; got != r.Mod.Version {
				t.Errorf("the SBOM lists %s at %q, go.mod requires %s", r.Mod.Path, got, r.Mod.Version)
			}
		}
	}
	if _, ok := pkgs["stdlib"]; !ok {
		t.Errorf("the SBOM lists no Go standard library")
	}
}

// checkChecksums is `sha256sum -c SHA256SUMS` in dist, which must cover
// every other file.
func checkChecksums(t *testing.T, dist string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: bad line %q", checksumsFile, sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dist, file))
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: %s FAILED", checksumsFile, file)
		}
		listed[file] = true
	}
	err = filepath.WalkDir(dist, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dist, path)
		if rel != checksumsFile && !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s does not list %s", checksumsFile, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
