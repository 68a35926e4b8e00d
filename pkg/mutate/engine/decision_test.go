package engine

import (
	"strings"
	"testing"
)

// alternatives is a request of n alternatives, each rv64gc and one
// extension.
func alternatives(n int) string {
	exts := []string{"zba", "zbb", "zbs", "zbc", "zfa", "zicond", "zicbom", "zicboz", "zihintpause", "zfh", "zvfh", "zkt", "zkn", "zks", "zvbb", "zvkt", "zcb", "zcmop"}
	var alts []string
	for k := range n {
		alts = append(alts, "rv64gc_"+exts[k%len(exts)])
	}
	return strings.Join(alts, "|")
}

// TestDecideCombinedLimit: images whose alternatives multiply past
// maxCombined are denied instead of minimised.
func TestDecideCombinedLimit(t *testing.T) {
	labelled := func(req string) []Platform {
		return []Platform{{OS: "linux", Architecture: "riscv64", ISARequest: req}}
	}
	in := Input{Images: []ImageInfo{
		{Ref: "a:1", Platforms: labelled(alternatives(16))},
		{Ref: "b:1", Platforms: labelled(alternatives(16))},
		{Ref: "c:1", Platforms: labelled(alternatives(17))},
	}}
	d := NewMatcher().Decide(in, &Snapshot{})
	if !strings.Contains(d.Denied, "combine into more than 256 ISA alternatives") {
		t.Errorf("denied = %q, want the combination limit", d.Denied)
	}
}
