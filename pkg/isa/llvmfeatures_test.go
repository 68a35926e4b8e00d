package isa

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toFeatures is RISCVISAInfo::toFeatures for a list of names: "+name" per
// extension in canonical order, "experimental-" for experimental ones,
// unknown ones only when all is set.
func toFeatures(names []string, all bool) []string {
	sorted := slices.Clone(names)
	sort.SliceStable(sorted, func(a, b int) bool { return llvmLess(sorted[a], sorted[b]) })
	var out []string
	for _, n := range sorted {
		i, ok := rv.index[n]
		switch {
		case !ok && all:
			out = append(out, "+"+n)
		case ok && rvTable[i].experimental:
			out = append(out, "+experimental-"+n)
		case ok:
			out = append(out, "+"+n)
		}
	}
	return out
}

func checkToFeatures(t *testing.T, c llvmCase) {
	t.Helper()
	var names []string
	all := strings.HasPrefix(c.api, "toFeatures(false,false)")
	if strings.Contains(c.api, "parseNormalizedArchString") {
		_, exts, err := parseNormalized(c.input)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range exts {
			names = append(names, e.name)
		}
	} else {
		_, s, err := parseRISCV(c.input, optionsFor(c.api))
		if err != nil {
			t.Fatal(err)
		}
		names = rv.list(s)
	}
	want := strings.Fields(parenRe.ReplaceAllString(c.ex, ""))
	if diff := cmp.Diff(want, toFeatures(names, all)); diff != "" {
		t.Errorf("features (-want +got):\n%s", diff)
	}
}

// isSupportedExtensionWithVersion mirrors the LLVM function of that name.
func isSupportedExtensionWithVersion(ext string) bool {
	if ext == "" {
		return false
	}
	pos := lastNonVersion(ext) + 1
	name, vers := ext[:pos], ext[pos:]
	if vers == "" {
		return false
	}
	if _, err := rvVersion(name, vers, llvmMC); err != nil {
		return false
	}
	_, ok := rv.index[name]
	return ok
}

// targetFeatureForExtension mirrors getTargetFeatureForExtension.
func targetFeatureForExtension(ext string) string {
	if ext == "" {
		return ""
	}
	pos := lastNonVersion(ext) + 1
	name := ext[:pos]
	if pos != len(ext) && !isSupportedExtensionWithVersion(ext) {
		return ""
	}
	i, ok := rv.index[name]
	if !ok {
		return ""
	}
	if rvTable[i].experimental {
		return "experimental-" + name
	}
	return name
}
