package isa_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/isamatch/isamatch/pkg/isa"
)

// corpus is a spread of node ISAs: real boards, servers, profiles.
func corpus(t testing.TB) []isa.ISA {
	t.Helper()
	var out []isa.ISA
	for _, b := range readCPUInfoSamples(t) {
		for _, l := range b.isas {
			i, err := isa.ParseCPUInfoRISCV(l, b.hints)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, i)
		}
	}
	for _, l := range readNamedLines(t, "testdata/x86_flags.txt") {
		out = append(out, isa.ParseX86Flags(strings.Fields(l)))
	}
	out = append(out, isa.ParseX86Flags(devMachineFlags(t)))
	for _, l := range readNamedLines(t, "testdata/arm64_features.txt") {
		out = append(out, isa.ParseARM64Features(strings.Fields(l)))
	}
	for _, s := range []string{"rv32imac", "rv32e", "rva23u64", "rva22u64", "rv64gcv_zvl256b", "RV64IMFD", "RV64IMFDV",
		"x86-64", "x86-64-v2", "x86-64-v4+amx-tile", "arm64", "arm64+sve2+sme"} {
		out = append(out, mustParse(t, s))
	}
	return out
}

// requests is a spread of pod requests.
func requests(t testing.TB) []isa.ISA {
	t.Helper()
	var out []isa.ISA
	for _, s := range []string{"rv64gc", "rv64gcv", "RV64IMFD", "rv64imac", "rv32imac", "rva20u64", "rva22u64", "rva23u64",
		"rv64gc_zba_zbb", "rv64gcb", "rv64gc_xtheadvector", "rva22u64_zifencei_zvbc", "rva23u64_zvbc", "rv32gc", "rv64g", "rv64gcv_zvfh", "rv64gch", "rv64gc_zicbom_zicboz",
		"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "x86-64-v2+avx512vnni", "x86-64-v3+sha+vaes", "x86-64-v4+amx-int8",
		"arm64", "arm64+sve", "arm64+sve2", "arm64+i8mm+bf16", "arm64+atomics+crc32"} {
		out = append(out, mustParse(t, s))
	}
	for _, v := range []string{"v8.2", "v8.4", "v9"} {
		p, err := isa.FromPlatform("linux", "arm64", v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// matches evaluates node-selector requirements over labels the way the
// kube-scheduler does.
func matches(t testing.TB, reqs []isa.Requirement, labels map[string]string) bool {
	t.Helper()
	for _, r := range reqs {
		v, ok := labels[r.Key]
		switch r.Operator {
		case "In":
			if !ok || !slices.Contains(r.Values, v) {
				return false
			}
		case "NotIn":
			if ok && slices.Contains(r.Values, v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		case "Gt", "Lt":
			if !ok || len(r.Values) != 1 {
				return false
			}
			have, err1 := strconv.Atoi(v)
			want, err2 := strconv.Atoi(r.Values[0])
			if err1 != nil || err2 != nil {
				return false
			}
			if (r.Operator == "Gt" && have <= want) || (r.Operator == "Lt" && have >= want) {
				return false
			}
		default:
			t.Fatalf("unknown operator %q", r.Operator)
		}
	}
	return true
}

func checkLabelsValid(t *testing.T, labels map[string]string) {
	t.Helper()
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("value %q of %q: %v", v, k, errs)
		}
		if !isa.IsOwnedLabel(k) {
			t.Errorf("key %q is not under an isamatch prefix", k)
		}
	}
}

// TestRequirementsExact: for every node and request, the stock scheduler's
// operators over NodeLabels decide exactly what Satisfies decides, natively
// and under emulation.
func TestRequirementsExact(t *testing.T) {
	nodes, reqs := corpus(t), requests(t)
	host := mustParse(t, "x86-64-v3")
	pairs, matched := 0, 0
	for _, n := range nodes {
		native := isa.NodeLabels(n, nil)
		emulated := isa.NodeLabels(host, []isa.ISA{n})
		for _, r := range reqs {
			pairs++
			want := isa.Satisfies(n, r)
			if want {
				matched++
			}
			if got := matches(t, isa.Requirements(r, false), native); got != want {
				t.Errorf("native: node %s, request %s: labels say %t, Satisfies %t", n.Short(), r.Short(), got, want)
			}
			if got := matches(t, isa.Requirements(r, true), emulated); got != want {
				t.Errorf("emulated: node %s, request %s: labels say %t, Satisfies %t", n.Short(), r.Short(), got, want)
			}
		}
	}
	if matched == 0 || matched == pairs {
		t.Errorf("%d of %d pairs match: corpus does not exercise both outcomes", matched, pairs)
	}
}

func TestRequirements(t *testing.T) {
	tests := []struct {
		req      string
		emulated bool
		want     []isa.Requirement
	}{
		{"RV64IMFD", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"riscv64"}},
			{Key: "isa.isamatch.io/rv.i", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.m", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.d", Operator: "Exists"},
		}},
		{"rv64gcv", true, []isa.Requirement{
			{Key: "qemu.isamatch.io/riscv64", Operator: "In", Values: []string{"true"}},
			{Key: "qemu.isamatch.io/rv.g", Operator: "Exists"},
			{Key: "qemu.isamatch.io/rv.c", Operator: "Exists"},
			{Key: "qemu.isamatch.io/rv.v", Operator: "Exists"},
			{Key: "qemu.isamatch.io/rv.zcd", Operator: "Exists"},
		}},
		{"rv64gc_zba_zbb", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"riscv64"}},
			{Key: "isa.isamatch.io/rv.g", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.c", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.zcd", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.zba", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.zbb", Operator: "Exists"},
		}},
		// A profile is one label, not its 30-odd extensions.
		{"rva23u64", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"riscv64"}},
			{Key: "isa.isamatch.io/rv.rva23u64", Operator: "Exists"},
		}},
		{"rva22u64_zifencei_zvbc", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"riscv64"}},
			{Key: "isa.isamatch.io/rv.rva22u64", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.zifencei", Operator: "Exists"},
			{Key: "isa.isamatch.io/rv.zvbc", Operator: "Exists"},
		}},
		{"x86-64-v3", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"amd64"}},
			{Key: "isa.isamatch.io/x86-64-level", Operator: "Gt", Values: []string{"2"}},
		}},
		{"x86-64-v2+avx512vnni", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"amd64"}},
			{Key: "isa.isamatch.io/x86-64-level", Operator: "Gt", Values: []string{"1"}},
			{Key: "isa.isamatch.io/x86.avx512vnni", Operator: "Exists"},
		}},
		{"x86-64", true, []isa.Requirement{
			{Key: "qemu.isamatch.io/amd64", Operator: "In", Values: []string{"true"}},
			{Key: "qemu.isamatch.io/x86-64-level", Operator: "Gt", Values: []string{"0"}},
		}},
		{"arm64+sve2", false, []isa.Requirement{
			{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"arm64"}},
			{Key: "isa.isamatch.io/arm64.sve2", Operator: "Exists"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.req+"/emulated="+strconv.FormatBool(tc.emulated), func(t *testing.T) {
			got := isa.Requirements(mustParse(t, tc.req), tc.emulated)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if isa.Requirements(isa.ISA{}, false) != nil {
		t.Error("requirements for a zero ISA")
	}
}

func TestNodeLabels(t *testing.T) {
	node, err := isa.ParseCPUInfoRISCV("rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd_zba_zbb", isa.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	emu := []isa.ISA{mustParse(t, "x86-64-v2"), mustParse(t, "x86-64+aes"), mustParse(t, "arm64")}
	got := isa.NodeLabels(node, emu)
	want := map[string]string{
		"isa.isamatch.io/arch":             "riscv64",
		"isa.isamatch.io/ext-count":        "17",
		"isa.isamatch.io/group":            isa.GroupID(node),
		"qemu.isamatch.io/amd64":           "true",
		"qemu.isamatch.io/arm64":           "true",
		"qemu.isamatch.io/x86-64-level":    "2",
		"qemu.isamatch.io/ext-count.amd64": "15",
		"qemu.isamatch.io/ext-count.arm64": "2",
		"qemu.isamatch.io/arm64.fp":        "true",
		"qemu.isamatch.io/arm64.asimd":     "true",
	}
	for _, e := range append(node.Extensions(), "g", "rva20u64") { // it has G, and Zicntr and Zihpm make it RVA20U64
		want["isa.isamatch.io/rv."+e] = "true"
	}
	x86u, _ := isa.Union(emu[0], emu[1])
	for _, e := range x86u.Extensions() {
		want["qemu.isamatch.io/x86."+e] = "true"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	checkLabelsValid(t, got)
	if len(isa.NodeLabels(isa.ISA{}, nil)) != 0 {
		t.Error("labels for a zero ISA")
	}
}

func TestLabelsValidAndRoundTrip(t *testing.T) {
	nodes := corpus(t)
	for k, n := range nodes {
		emu := []isa.ISA{nodes[(k+1)%len(nodes)], nodes[(k+7)%len(nodes)]}
		if emu[0].Arch == isa.RISCV32 || emu[1].Arch == isa.RISCV32 {
			emu = emu[:0] // riscv32 and riscv64 share the rv. keys; see NodeLabels
		}
		t.Run(strconv.Itoa(k)+"/"+n.Short(), func(t *testing.T) {
			l := isa.NodeLabels(n, emu)
			checkLabelsValid(t, l)
			gotN, gotE, ok := isa.NodeFromLabels(l)
			if !ok {
				t.Fatal("NodeFromLabels: not ok")
			}
			wantN := n
			wantN.Unknown = nil
			if diff := cmp.Diff(wantN, gotN); diff != "" {
				t.Errorf("native (-want +got):\n%s", diff)
			}
			// Emulated ISAs come back merged per arch, sorted by arch.
			var wantE []isa.ISA
			for _, a := range []isa.Arch{isa.AMD64, isa.ARM64, isa.RISCV32, isa.RISCV64} {
				var acc *isa.ISA
				for _, e := range emu {
					if e.Arch != a {
						continue
					}
					if acc == nil {
						c := e
						acc = &c
						continue
					}
					u, _ := isa.Union(*acc, e)
					acc = &u
				}
				if acc != nil {
					acc.Unknown = nil
					wantE = append(wantE, *acc)
				}
			}
			if diff := cmp.Diff(wantE, gotE); diff != "" {
				t.Errorf("emulated (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, ok := isa.NodeFromLabels(map[string]string{"kubernetes.io/arch": "amd64"}); ok {
		t.Error("NodeFromLabels ok without isamatch labels")
	}
	if _, _, ok := isa.NodeFromLabels(map[string]string{"isa.isamatch.io/arch": "mips"}); ok {
		t.Error("NodeFromLabels ok for an unknown arch")
	}
}

func TestGroupID(t *testing.T) {
	hex10 := regexp.MustCompile(`^[0-9a-f]{10}$`)
	seen := map[string]string{}
	for _, n := range corpus(t) {
		id := isa.GroupID(n)
		if !hex10.MatchString(id) {
			t.Errorf("GroupID(%s) = %q", n.Short(), id)
		}
		if prev, ok := seen[id]; ok && prev != n.String() {
			t.Errorf("GroupID collision: %s and %s", prev, n.String())
		}
		seen[id] = n.String()
	}
	a, _ := isa.ParseCPUInfoRISCV("rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb", isa.Hints{})
	b, _ := isa.ParseCPUInfoRISCV("rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd_zba_zbb_xfoo", isa.Hints{})
	if isa.GroupID(a) != isa.GroupID(b) {
		t.Error("equal extension sets (Unknown aside) have different groups")
	}
}

func TestIsOwnedLabel(t *testing.T) {
	for k, want := range map[string]bool{
		"isa.isamatch.io/arch": true, "qemu.isamatch.io/riscv64": true, "isa.isamatch.io/rv.v": true,
		"kubernetes.io/arch": false, "isamatch.io/x": false, "feature.node.kubernetes.io/cpu-model": false, "": false,
	} {
		if got := isa.IsOwnedLabel(k); got != want {
			t.Errorf("IsOwnedLabel(%q) = %t, want %t", k, got, want)
		}
	}
}

func TestCompact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rv64gc_zba_zbb", "rv64gc_zba_zbb"},
		{"rv64imafdc_zicsr_zifencei_zba_zbb", "rv64gc_zba_zbb"},
		{"rv64gcv", "rv64gcv"},
		{"RV64IMFD", "rv64imfd"},
		{"rva23u64", "rva23u64"},
		{"rva23u64_zvbc", "rva23u64_zvbc"},
		{"rva22u64_v", "rva22u64_v"},
		{"rv32imac", "rv32imac"},
		{"x86-64-v3", mustParse(t, "x86-64-v3").String()},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := mustParse(t, tc.in).Compact(); got != tc.want {
				t.Errorf("Compact() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCompactReadsBack: Compact of every corpus node and request parses
// back to an ISA that satisfies and is satisfied by the original.
func TestCompactReadsBack(t *testing.T) {
	for _, i := range append(corpus(t), requests(t)...) {
		if i.Arch != isa.RISCV64 && i.Arch != isa.RISCV32 {
			continue
		}
		c := i.Compact()
		back, err := isa.Parse(c)
		if err != nil {
			t.Errorf("%s: Compact %q does not parse: %v", i.Short(), c, err)
			continue
		}
		if !isa.Satisfies(back, i) || !isa.Satisfies(i, back) {
			t.Errorf("%s: Compact %q reads back as %s", i.Short(), c, back.Short())
		}
		if len(c) > len(i.Short()) {
			t.Errorf("%s: Compact %q is longer", i.Short(), c)
		}
	}
}

func TestGroupDomainLabel(t *testing.T) {
	long := strings.Repeat("worker-node.", 8) + "example.internal"
	n, err := isa.Parse("rv64gcv")
	if err != nil {
		t.Fatal(err)
	}
	id := isa.GroupID(n)
	for _, tc := range []struct {
		name, node, wantValue string
	}{
		{"short name kept", "node-1", "node-1"},
		{"63 characters kept", strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{"long name shortened", long, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := isa.WithGroupDomain(isa.NodeLabels(n, nil), tc.node)
			k, v := isa.GroupDomainLabel(id, tc.node)
			if k != isa.GroupDomainPrefix+id || l[k] != v {
				t.Fatalf("WithGroupDomain wrote %q=%q, GroupDomainLabel says %q=%q", k, l[k], k, v)
			}
			if tc.wantValue != "" && v != tc.wantValue {
				t.Errorf("value %q, want %q", v, tc.wantValue)
			}
			checkLabelsValid(t, l)
			got, _, ok := isa.NodeFromLabels(l)
			if !ok || !isa.Satisfies(got, n) || !isa.Satisfies(n, got) {
				t.Errorf("NodeFromLabels with the domain label = %s, %t; want %s", got.Short(), ok, n.Short())
			}
			if !isa.IsGroupDomainLabel(k) || !isa.IsOwnedLabel(k) {
				t.Errorf("%q: IsGroupDomainLabel %t, IsOwnedLabel %t; want both", k, isa.IsGroupDomainLabel(k), isa.IsOwnedLabel(k))
			}
		})
	}
	_, v1 := isa.GroupDomainLabel(id, long+"-1")
	_, v2 := isa.GroupDomainLabel(id, long+"-2")
	if v1 == v2 {
		t.Errorf("two long node names share the domain value %q", v1)
	}
	if isa.IsGroupDomainLabel(isa.GroupLabel) {
		t.Errorf("IsGroupDomainLabel(%q) = true", isa.GroupLabel)
	}
	if l := isa.WithGroupDomain(map[string]string{"kubernetes.io/arch": "amd64"}, "n"); len(l) != 1 {
		t.Errorf("WithGroupDomain added to labels without a group: %v", l)
	}
}
