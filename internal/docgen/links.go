package docgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// mdLink matches an inline Markdown link's target: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// BrokenLinks returns, for the Markdown files (paths relative to root),
// every relative link whose file does not exist or whose #anchor is no
// heading of the file it names, as "file: target". Links with a scheme
// (https:, mailto:) and links inside code fences are not checked.
func BrokenLinks(root string, files []string) ([]string, error) {
	anchors := map[string]map[string]bool{}
	var out []string
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for _, target := range links(text) {
			if i := strings.Index(target, ":"); i > 0 && !strings.ContainsAny(target[:i], "/#.") {
				continue // a URL
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
			}
			if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
				out = append(out, f+": "+target+" (no such file)")
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if anchors[dest] == nil {
				b, err := os.ReadFile(filepath.Join(root, dest))
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", dest, err)
				}
				anchors[dest] = headingAnchors(b)
			}
			if !anchors[dest][anchor] {
				out = append(out, f+": "+target+" (no such heading)")
			}
		}
	}
	return out, nil
}

// links returns the link targets of a Markdown text outside code fences.
func links(text []byte) []string {
	var out []string
	fence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation but - and _ dropped, spaces as
// -, and -1, -2, ... on repeats.
func headingAnchors(text []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		s := b.String()
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
