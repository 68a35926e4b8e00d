package krew

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func shipped(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", TemplatePath))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fakeSHA is a digest per archive name, for the archives in built.
func fakeSHA(built ...string) func(string) (string, bool) {
	return func(archive string) (string, bool) {
		if len(built) > 0 && !slices.Contains(built, archive) {
			return "", false
		}
		return fmt.Sprintf("%x", sha256.Sum256([]byte(archive))), true
	}
}

// TestRenderTemplate renders the shipped template as krew-release-bot does
// and checks what krew-index requires, for every platform it names.
func TestRenderTemplate(t *testing.T) {
	const tag = "v1.2.3"
	out, err := Render(shipped(t), tag, fakeSHA())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Check(out, tag)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, pl := range p.Spec.Platforms {
		got = append(got, pl.OSArch())
		if want, _ := fakeSHA()(filepath.Base(pl.URI)); pl.SHA256 != want {
			t.Errorf("%s: sha256 %s, want its archive's %s", pl.OSArch(), pl.SHA256, want)
		}
	}
	for _, want := range []string{"linux/amd64", "linux/arm64", "linux/riscv64", "darwin/amd64", "darwin/arm64", "windows/amd64"} {
		if !slices.Contains(got, want) {
			t.Errorf("no platform %s in %v", want, got)
		}
	}
	listed, err := Platforms(shipped(t))
	if err != nil || !slices.Equal(listed, got) {
		t.Errorf("Platforms = %v, %v; want %v", listed, err, got)
	}
	if !strings.Contains(string(out), "caveats:") {
		t.Errorf("the rendered manifest lost the template's other fields:\n%s", out)
	}
}

// TestRenderBuilt leaves out the platforms whose archive was not built.
func TestRenderBuilt(t *testing.T) {
	out, err := Render(shipped(t), "v0.1.0", fakeSHA(Archive("linux", "amd64")))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Check(out, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Platforms) != 1 || p.Spec.Platforms[0].OSArch() != "linux/amd64" {
		t.Errorf("platforms %+v, want linux/amd64 alone", p.Spec.Platforms)
	}
	if _, err := Render(shipped(t), "v0.1.0", fakeSHA("nothing.tar.gz")); err == nil {
		t.Error("no archive built: want an error")
	}
}

// TestCheck refuses what krew-index refuses.
func TestCheck(t *testing.T) {
	good, err := Render(shipped(t), "v1.0.0", fakeSHA())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ old, new, tag, want string }{
		"another tag":  {tag: "v2.0.0", want: `version "v1.0.0", want the tag v2.0.0`},
		"short digest": {old: "sha256: ", new: "sha256: ab", want: "is not 64 hex digits"},
		"another name": {old: "name: isa", new: "name: isb", want: `name "isb", want isa`},
		"another bin":  {old: "bin: kubectl-isa\n", new: "bin: kubectl-is\n", want: `bin "kubectl-is", want kubectl-isa`},
		"foreign URI":  {old: "uri: https://github.com/", new: "uri: https://example.com/", want: "uri"},
		"no platforms": {old: "platforms:", new: "notplatforms:", want: "no platforms"},
	} {
		t.Run(name, func(t *testing.T) {
			tag := "v1.0.0"
			if tc.tag != "" {
				tag = tc.tag
			}
			m := string(good)
			if tc.old != "" {
				if !strings.Contains(m, tc.old) {
					t.Fatalf("%q not in\n%s", tc.old, m)
				}
				m = strings.Replace(m, tc.old, tc.new, 1)
			}
			if _, err := Check([]byte(m), tag); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
