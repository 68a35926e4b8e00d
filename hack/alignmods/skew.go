package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// listFormat prints, for each package, its module: path, version and, when
// a go.mod replaces it, the replacement's path and version.
const listFormat = `{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Path}} {{.Version}}{{end}}{{end}}`

// use is the version of one module one build compiles.
type use struct {
	dir      string
	path     string
	version  string // the version compiled: the replacement's when replaced
	replaced string // the replacement's module path, "" when not replaced
}

// parseList reads go list's listFormat lines into the distinct modules,
// leaving out main modules (no version) and local replacements.
func parseList(out string) ([]use, error) {
	seen := map[string]bool{}
	var mods []use
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0, len(f) == 1: // standard library, or a main module
			continue
		case len(f) == 2:
			if !seen[f[0]] {
				mods = append(mods, use{path: f[0], version: f[1]})
			}
		case len(f) == 4:
			if !seen[f[0]] {
				mods = append(mods, use{path: f[0], version: f[3], replaced: f[2]})
			}
		case len(f) == 3: // replaced by a directory
			continue
		default:
			return nil, fmt.Errorf("unexpected go list line %q", line)
		}
		seen[f[0]] = true
	}
	for _, m := range mods {
		if !semver.IsValid(m.version) {
			return nil, fmt.Errorf("module %s: version %q is not semantic", m.path, m.version)
		}
	}
	return mods, nil
}

// skew is a module the builds compile at more than one version.
type skew struct {
	path string
	uses []use
}

// highest is the newest version any build compiles.
func (s skew) highest() string {
	v := s.uses[0].version
	for _, u := range s.uses[1:] {
		if semver.Compare(u.version, v) > 0 {
			v = u.version
		}
	}
	return v
}

func (s skew) String() string {
	byVersion := map[string][]string{}
	for _, u := range s.uses {
		byVersion[u.version] = append(byVersion[u.version], u.dir)
	}
	versions := slices.SortedFunc(maps.Keys(byVersion), semver.Compare)
	var parts []string
	for _, v := range versions {
		parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(byVersion[v], ", ")))
	}
	return s.path + ": " + strings.Join(parts, " < ")
}

// pinned are modules a build keeps at a version of its own on purpose,
// left out of the comparison: a module path, or a path prefix ending in
// "/" for every module under it.
var pinned = map[string][]string{
	// descheduler calls the Query signature client_golang v1.25 changed (a
	// replace in rebalance/go.mod).
	"rebalance": {"github.com/prometheus/client_golang"},
	// Kueue compiles against its own Kubernetes release (k8s.io/kubernetes
	// internals through sigs.k8s.io/scheduler-library), which the control
	// plane's cannot replace; the modules outside that release (x/sys,
	// protobuf, grpc, OpenTelemetry, Prometheus, ...) it shares.
	"hack/kueue": {"k8s.io/", "sigs.k8s.io/controller-runtime"},
}

// isPinned reports whether build dir keeps module path at its own version.
func isPinned(dir, path string) bool {
	return slices.ContainsFunc(pinned[dir], func(p string) bool {
		return p == path || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p))
	})
}

// findSkews returns the modules compiled at more than one version, by path.
func findSkews(uses map[string][]use) []skew {
	var skews []skew
	for _, path := range slices.Sorted(maps.Keys(uses)) {
		us := slices.DeleteFunc(slices.Clone(uses[path]), func(u use) bool {
			return isPinned(u.dir, u.path)
		})
		if len(us) == 0 {
			continue
		}
		if slices.ContainsFunc(us[1:], func(u use) bool { return u.version != us[0].version }) {
			skews = append(skews, skew{path: path, uses: us})
		}
	}
	return skews
}

// planEdits returns, per module directory, the go mod edit flags that raise
// each skewed module to its highest version: -replace where that directory
// replaces the module, -require elsewhere.
func planEdits(skews []skew) map[string][]string {
	edits := map[string][]string{}
	for _, s := range skews {
		top := s.highest()
		for _, u := range s.uses {
			if u.version == top {
				continue
			}
			if u.replaced != "" {
				edits[u.dir] = append(edits[u.dir], fmt.Sprintf("-replace=%s=%s@%s", u.path, u.replaced, top))
			} else {
				edits[u.dir] = append(edits[u.dir], fmt.Sprintf("-require=%s@%s", u.path, top))
			}
		}
	}
	return edits
}
