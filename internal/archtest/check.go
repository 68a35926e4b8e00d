package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Package is what the check needs of one package of the build: its import
// path, its direct imports and everything it links (go list's Imports and
// Deps).
type Package struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// Violation is one package importing (or linking) what a rule denies.
type Violation struct {
	// Pkg is the offending package, relative to the repository; Deny the
	// rule's entry it breaks; Deps what it imports or links that the entry
	// matches; Via the direct import through which the first of Deps is
	// linked.
	Pkg, Deny string
	Deps      []string
	Via       string
	Rule      Rule
}

func (v Violation) String() string {
	how := "imports"
	if v.Rule.Linked {
		how = "links"
	}
	deps := v.Deps
	more := ""
	if len(deps) > 3 {
		deps, more = deps[:3], fmt.Sprintf(" and %d more", len(v.Deps)-3)
	}
	via := ""
	if v.Via != "" && v.Via != v.Deps[0] {
		via = " (through " + v.Via + ")"
	}
	return fmt.Sprintf("%s %s %s%s%s, which the rule %q denies: %s", v.Pkg, how, strings.Join(deps, ", "), more, via, v.Deny, v.Rule.Why)
}

// Check returns the violations of rules in pkgs (the packages of both
// modules with every package they link), sorted, and the allowances that
// excused one; a violation an allowance names is not returned.
func Check(pkgs []Package, rules []Rule, allowances []Allowance) (violations []Violation, used []Allowance) {
	byPath := map[string]Package{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	for _, p := range pkgs {
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !matchPattern(r.From, rel) || slices.ContainsFunc(r.Except, func(e string) bool { return matchPattern(e, rel) }) {
				continue
			}
			deps := p.Imports
			if r.Linked {
				deps = p.Deps
			}
			for _, deny := range r.Deny {
				var bad []string
				for _, d := range deps {
					if d != p.ImportPath && denied(deny, d) && !slices.ContainsFunc(r.Allow, func(a string) bool { return denied(a, d) }) {
						bad = append(bad, d)
					}
				}
				if len(bad) == 0 {
					continue
				}
				if i := slices.IndexFunc(allowances, func(a Allowance) bool { return a.From == rel && a.Dep == deny }); i >= 0 {
					if !slices.Contains(used, allowances[i]) {
						used = append(used, allowances[i])
					}
					continue
				}
				sort.Strings(bad)
				violations = append(violations, Violation{Pkg: rel, Deny: deny, Deps: bad, Via: via(p, bad[0], byPath), Rule: r})
			}
		}
	}
	sort.Slice(violations, func(i, j int) bool {
		if violations[i].Pkg != violations[j].Pkg {
			return violations[i].Pkg < violations[j].Pkg
		}
		return violations[i].Deny < violations[j].Deny
	})
	return violations, used
}

// relative is path relative to the repository ("pkg/isa",
// "rebalance/pkg/isafit"), false for a package of neither module.
func relative(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, Module+"/")
	return rel, ok
}

// matchPattern reports whether rel matches pattern: "..." matches all,
// "a/..." a and everything under it, anything else only itself.
func matchPattern(pattern, rel string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

// denied reports whether the Deny entry deny matches the import path dep.
func denied(deny, dep string) bool {
	rel, inModule := relative(dep)
	switch {
	case deny == NonStandard:
		return !inModule && !standard(dep)
	case isPathPrefix(deny):
		return dep == strings.TrimSuffix(deny, "/") || strings.HasPrefix(dep, deny) ||
			(!strings.HasSuffix(deny, "/") && strings.HasPrefix(dep, deny+"/"))
	}
	return inModule && matchPattern(deny, rel)
}

// isPathPrefix tells an import path prefix ("k8s.io/", a domain first)
// from a pattern of the root module ("internal/...").
func isPathPrefix(deny string) bool {
	first, _, _ := strings.Cut(deny, "/")
	return strings.Contains(first, ".")
}

// standard reports whether path is of the standard library: its first
// element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// via returns the direct import of p through which p links dep.
func via(p Package, dep string, byPath map[string]Package) string {
	for _, imp := range p.Imports {
		if imp == dep || slices.Contains(byPath[imp].Deps, dep) {
			return imp
		}
	}
	return ""
}
