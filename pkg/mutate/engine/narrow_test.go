package engine

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

func in(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func exists(key string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists}
}

func term(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: reqs}
}

func selector(terms ...corev1.NodeSelectorTerm) *corev1.NodeSelector {
	return &corev1.NodeSelector{NodeSelectorTerms: terms}
}

// The alternatives of the table below, as Decide writes them.
var (
	altRVV   = term(in(isa.ArchLabel, "riscv64"), exists("isa.isamatch.io/rv.v"))
	altRVA23 = term(in(isa.ArchLabel, "riscv64"), exists("isa.isamatch.io/rv.rva23u64"))
	altV3    = term(in(isa.ArchLabel, "amd64"), exists("isa.isamatch.io/x86.v3"))
	altPlain = term(in(isa.KubeArchLabel, "amd64", "riscv64"))
	zoneA    = in("zone", "a")
	notIn    = corev1.NodeSelectorRequirement{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpNotIn, Values: modeledArches}
	never    = neverTerm.MatchExpressions
)

// with is t's requirements followed by more.
func with(t corev1.NodeSelectorTerm, more ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return withAll(t, more)
}

func withAll(t corev1.NodeSelectorTerm, more []corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	out := *t.DeepCopy()
	out.MatchExpressions = append(out.MatchExpressions, more...)
	return out
}

// TestNarrowRequired covers each rule the API server applies to the required
// node affinity of a gated pod (nil or no terms: set freely; otherwise the
// same terms, each only gaining requirements) and each way isamatch's
// alternatives can meet the pod's terms.
func TestNarrowRequired(t *testing.T) {
	zone := term(zoneA)
	split := SplitByArch(selector(zone), DefaultMaxRequiredTerms)
	tests := []struct {
		name         string
		cur          *corev1.NodeSelector
		ours         []corev1.NodeSelectorTerm
		want         *corev1.NodeSelector
		wantNarrowed bool
		wantOK       bool
	}{
		{name: "nothing of ours leaves the pod's terms", cur: selector(zone), want: selector(zone), wantOK: true},
		{name: "nil is set to every alternative", ours: []corev1.NodeSelectorTerm{altRVV, altV3}, want: selector(altRVV, altV3), wantOK: true},
		{name: "no terms is set to every alternative", cur: selector(), ours: []corev1.NodeSelectorTerm{altRVV, altV3}, want: selector(altRVV, altV3), wantOK: true},
		{name: "one alternative is added to the pod's term", cur: selector(zone), ours: []corev1.NodeSelectorTerm{altV3},
			want: selector(withAll(zone, altV3.MatchExpressions)), wantOK: true},
		{name: "two alternatives and one unpinned term of the pod: the first is kept", cur: selector(zone), ours: []corev1.NodeSelectorTerm{altRVV, altV3},
			want: selector(withAll(zone, altRVV.MatchExpressions)), wantNarrowed: true, wantOK: true},
		{name: "terms split by architecture each gain their alternative", cur: split, ours: []corev1.NodeSelectorTerm{altRVV, altV3},
			want: selector(
				withAll(split.NodeSelectorTerms[0], altV3.MatchExpressions),  // amd64
				withAll(split.NodeSelectorTerms[1], never),                   // arm64
				withAll(split.NodeSelectorTerms[2], altRVV.MatchExpressions), // riscv64
				withAll(split.NodeSelectorTerms[3], never),                   // riscv32
				withAll(split.NodeSelectorTerms[4], never),                   // others
			), wantOK: true},
		{name: "a plain multi-architecture alternative meets each split term of its architectures", cur: split, ours: []corev1.NodeSelectorTerm{altPlain},
			want: selector(
				withAll(split.NodeSelectorTerms[0], altPlain.MatchExpressions),
				withAll(split.NodeSelectorTerms[1], never),
				withAll(split.NodeSelectorTerms[2], altPlain.MatchExpressions),
				withAll(split.NodeSelectorTerms[3], never),
				withAll(split.NodeSelectorTerms[4], never),
			), wantOK: true},
		{name: "two alternatives of one architecture in a pinned term: the first is kept", cur: selector(term(in(isa.KubeArchLabel, "riscv64"))),
			ours: []corev1.NodeSelectorTerm{altRVV, altRVA23},
			want: selector(withAll(term(in(isa.KubeArchLabel, "riscv64")), altRVV.MatchExpressions)), wantNarrowed: true, wantOK: true},
		{name: "an alternative the term already holds adds nothing twice", cur: selector(with(altRVV, zoneA)), ours: []corev1.NodeSelectorTerm{altRVV},
			want: selector(with(altRVV, zoneA)), wantOK: true},
		{name: "an alternative the term implies wins over a wider one", cur: selector(altRVV), ours: []corev1.NodeSelectorTerm{altRVV, term(in(isa.ArchLabel, "riscv64"))},
			want: selector(altRVV), wantOK: true},
		{name: "a term of another architecture gains the never-matching pair", cur: selector(term(in(isa.KubeArchLabel, "arm64")), term(in(isa.KubeArchLabel, "amd64"))),
			ours: []corev1.NodeSelectorTerm{altV3},
			want: selector(withAll(term(in(isa.KubeArchLabel, "arm64")), never), withAll(term(in(isa.KubeArchLabel, "amd64")), altV3.MatchExpressions)), wantOK: true},
		{name: "no term meets any alternative", cur: selector(term(in(isa.KubeArchLabel, "arm64"))), ours: []corev1.NodeSelectorTerm{altV3, altRVV},
			want: selector(withAll(term(in(isa.KubeArchLabel, "arm64")), never)), wantOK: false},
		{name: "a contradiction on another key counts as not meeting", cur: selector(term(in("isa.isamatch.io/x86.v3", "false"))),
			ours: []corev1.NodeSelectorTerm{term(in("isa.isamatch.io/x86.v3", "true"))},
			want: selector(withAll(term(in("isa.isamatch.io/x86.v3", "false")), never)), wantOK: false},
		{name: "an empty term of the pod stays as it is", cur: selector(corev1.NodeSelectorTerm{}, zone), ours: []corev1.NodeSelectorTerm{altV3},
			want: selector(corev1.NodeSelectorTerm{}, withAll(zone, altV3.MatchExpressions)), wantOK: true},
		{name: "match fields are kept", cur: selector(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{in("metadata.name", "n1")}}),
			ours: []corev1.NodeSelectorTerm{altV3},
			want: selector(corev1.NodeSelectorTerm{MatchExpressions: altV3.MatchExpressions, MatchFields: []corev1.NodeSelectorRequirement{in("metadata.name", "n1")}}), wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, narrowed, ok, err := NarrowRequired(tc.cur.DeepCopy(), tc.ours, DefaultMaxRequiredTerms)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
			if narrowed != tc.wantNarrowed || ok != tc.wantOK {
				t.Errorf("narrowed, ok = %v, %v; want %v, %v", narrowed, ok, tc.wantNarrowed, tc.wantOK)
			}
			if !IsNarrowingOf(got, tc.cur) {
				t.Errorf("the API server would refuse %v over %v on a gated pod", got, tc.cur)
			}
		})
	}
}

// TestIsNarrowingOf is the API server's rule for the required node affinity
// of a gated pod, case by case.
func TestIsNarrowingOf(t *testing.T) {
	a, b := term(zoneA), term(in(isa.KubeArchLabel, "amd64"))
	tests := []struct {
		name       string
		prev, next *corev1.NodeSelector
		want       bool
	}{
		{name: "nil may be set", prev: nil, next: selector(a, b), want: true},
		{name: "no terms may be set", prev: selector(), next: selector(a, b), want: true},
		{name: "unchanged", prev: selector(a, b), next: selector(a, b), want: true},
		{name: "requirements appended to each term", prev: selector(a, b), next: selector(with(a, exists("x")), with(b, exists("y"))), want: true},
		{name: "a term added", prev: selector(a), next: selector(a, b), want: false},
		{name: "a term removed", prev: selector(a, b), next: selector(a), want: false},
		{name: "set to nil", prev: selector(a), next: nil, want: false},
		{name: "a requirement removed", prev: selector(with(a, exists("x"))), next: selector(a), want: false},
		{name: "a requirement changed", prev: selector(a), next: selector(term(in("zone", "b"))), want: false},
		{name: "requirements reordered", prev: selector(with(a, exists("x"))), next: selector(term(exists("x"), zoneA)), want: false},
		{name: "values reordered", prev: selector(term(in("zone", "a", "b"))), next: selector(term(in("zone", "b", "a"))), want: false},
		{name: "a requirement inserted before the old ones", prev: selector(a), next: selector(term(exists("x"), zoneA)), want: false},
		{name: "terms swapped", prev: selector(a, b), next: selector(b, a), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsNarrowingOf(tc.next, tc.prev); got != tc.want {
				t.Errorf("IsNarrowingOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSplitByArch: every term ends up admitting one architecture at most,
// the selector admits the same nodes, and splitting twice is splitting once.
func TestSplitByArch(t *testing.T) {
	zone := term(zoneA)
	tests := []struct {
		name string
		sel  *corev1.NodeSelector
		max  int
		want *corev1.NodeSelector
	}{
		{name: "nil", want: nil},
		{name: "unpinned term: once per modelled architecture and once for the others", sel: selector(zone), max: 64, want: selector(
			with(zone, in(isa.KubeArchLabel, "amd64")), with(zone, in(isa.KubeArchLabel, "arm64")),
			with(zone, in(isa.KubeArchLabel, "riscv64")), with(zone, in(isa.KubeArchLabel, "riscv32")), with(zone, notIn))},
		{name: "pinned to one architecture: kept", sel: selector(altRVV, altV3), max: 64, want: selector(altRVV, altV3)},
		{name: "pinned to two: once each", sel: selector(altPlain), max: 64, want: selector(
			with(altPlain, in(isa.KubeArchLabel, "amd64")), with(altPlain, in(isa.KubeArchLabel, "riscv64")))},
		{name: "excluding some architectures: the others and the rest", sel: selector(term(corev1.NodeSelectorRequirement{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"amd64", "arm64", "riscv32"}})), max: 64,
			want: func() *corev1.NodeSelector {
				base := term(corev1.NodeSelectorRequirement{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"amd64", "arm64", "riscv32"}})
				return selector(with(base, in(isa.KubeArchLabel, "riscv64")), with(base, notIn))
			}()},
		{name: "empty term kept", sel: selector(corev1.NodeSelectorTerm{}), max: 64, want: selector(corev1.NodeSelectorTerm{})},
		{name: "over the term limit: unchanged", sel: selector(zone, altV3), max: 5, want: selector(zone, altV3)},
	}
	nodes := testnodes.Paper(t)
	nodes["s390x"] = map[string]string{isa.KubeArchLabel: "s390x", "zone": "a"}
	nodes["nolabel"] = map[string]string{"zone": "a"}
	for name, l := range nodes {
		if name != "nolabel" {
			l["zone"] = "a"
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitByArch(tc.sel.DeepCopy(), tc.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("split (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got, SplitByArch(got.DeepCopy(), tc.max)); diff != "" {
				t.Errorf("split twice (-once +twice):\n%s", diff)
			}
			if tc.sel == nil {
				return
			}
			for name, l := range nodes {
				before := testnodes.Admits(podWith(tc.sel), name, l)
				if after := testnodes.Admits(podWith(got), name, l); after != before {
					t.Errorf("node %s admitted %v before the split, %v after", name, before, after)
				}
			}
		})
	}
}

func podWith(sel *corev1.NodeSelector) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}}}
}
