package docgen

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocLinks fails on a relative link of the user documentation whose
// file or heading is gone, as happens when a section moves.
func TestDocLinks(t *testing.T) {
	files := []string{"README.md", "ARCHITECTURE.md"}
	for _, dir := range []string{"docs", "config", "charts"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	broken, err := BrokenLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors([]byte("# A b\n## The image's own binary (`--infer-elf`)\n```\n# not a heading\n```\n## A b\n"))
	want := map[string]bool{"a-b": true, "the-images-own-binary---infer-elf": true, "a-b-1": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReadmeStartsWithSetUp keeps the README's first lines what a reader
// needs first: the title, then the two set-up commands.
func TestReadmeStartsWithSetUp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# isamatch\n\n```sh\nmake demo   # "
	if !strings.HasPrefix(string(b), want) || !strings.Contains(string(b[:2000]), "\nmake test   # ") {
		t.Errorf("README.md must start with %q and the make test line; it starts with %q", want, b[:min(len(b), 80)])
	}
}
