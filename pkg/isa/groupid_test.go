package isa_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// updateGroupIDs rewrites testdata/group_ids.tsv from the fixtures. Only for
// a fixture added: a release that changes the group of an ISA already listed
// makes the preferred terms of an old webhook name groups no node of the new
// labeler carries (docs/install.md, "Version skew").
var updateGroupIDs = flag.Bool("update-group-ids", false, "rewrite testdata/group_ids.tsv (new fixtures only)")

const groupIDsFile = "testdata/group_ids.tsv"

// namedNodeISAs are the node ISAs of every fixture, by a name that says
// where it comes from: each isa line of the captured RISC-V boards, each x86
// flags line, each arm64 features line, and the canonical spellings users
// request.
func namedNodeISAs(t *testing.T) map[string]isa.ISA {
	t.Helper()
	out := map[string]isa.ISA{}
	for _, b := range readCPUInfoSamples(t) {
		for _, l := range b.isas {
			i, err := isa.ParseCPUInfoRISCV(l, b.hints)
			if err != nil {
				t.Fatal(err)
			}
			out["cpuinfo "+b.title+": "+l] = i
		}
	}
	for name, l := range readNamedLines(t, "testdata/x86_flags.txt") {
		out["x86 flags "+name] = isa.ParseX86Flags(strings.Fields(l))
	}
	out["x86 flags dev-machine (captured)"] = isa.ParseX86Flags(devMachineFlags(t))
	for name, l := range readNamedLines(t, "testdata/arm64_features.txt") {
		out["arm64 features "+name] = isa.ParseARM64Features(strings.Fields(l))
	}
	for _, s := range []string{"riscv64", "riscv32", "rv64gc", "rv64gcv", "rv32imac", "rv32e", "rva20u64", "rva22u64", "rva23u64",
		"rvb23u64", "rv64gcv_zvl256b", "RV64IMFD", "RV64IMFDV", "amd64", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
		"x86-64-v4+amx-tile", "arm64", "arm64+sve", "arm64+sve2+sme"} {
		out["request "+s] = mustParse(t, s)
	}
	return out
}

// TestGroupIDVectors pins isa.GroupID, the value of the group label the
// labeler writes and the webhook's preferred terms name, for every ISA of
// the fixtures: labeler and webhook of two releases must agree on it while
// one of them rolls.
func TestGroupIDVectors(t *testing.T) {
	type vector struct{ canonical, group string }
	got := map[string]vector{}
	for name, i := range namedNodeISAs(t) {
		got[name] = vector{canonical: i.String(), group: isa.GroupID(i)}
	}
	if *updateGroupIDs {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range got {
				if !yield(n) {
					return
				}
			}
		})
		var b strings.Builder
		b.WriteString("# isa.GroupID of every fixture's node ISA: name<TAB>String()<TAB>GroupID.\n")
		b.WriteString("# Pinned: a change here changes node labels across a release (docs/install.md, \"Version skew\").\n")
		for _, n := range names {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", n, got[n].canonical, got[n].group)
		}
		if err := os.WriteFile(groupIDsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(groupIDsFile)
	if err != nil {
		t.Fatalf("%v (write it with go test ./pkg/isa -run TestGroupIDVectors -update-group-ids)", err)
	}
	defer f.Close()
	want := map[string]vector{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("%s: row %q: want name<TAB>canonical<TAB>group", groupIDsFile, line)
		}
		want[fields[0]] = vector{canonical: fields[1], group: fields[2]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 80 {
		t.Errorf("%s pins %d ISAs, want the whole corpus (at least 80)", groupIDsFile, len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: fixture %q is gone: keep it, its group is what nodes labelled by earlier releases carry", groupIDsFile, name)
		case g.group != w.group:
			t.Errorf("fixture %q: GroupID = %s, pinned %s (String() %q, pinned %q): a node keeps no group across the upgrade; %s",
				name, g.group, w.group, g.canonical, w.canonical, cmp.Diff(w.canonical, g.canonical))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("fixture %q has no pinned group: add it with go test ./pkg/isa -run TestGroupIDVectors -update-group-ids", name)
		}
	}
}
