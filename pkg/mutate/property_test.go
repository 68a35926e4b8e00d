package mutate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

var (
	propNative = []string{"rv64imfd", "rv64imfdv", "rv64gc", "rv64gcv", "rva22u64", "rva23u64", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "arm64", "arm64+sve2"}
	propReq    = []string{"rv64imfd", "rv64gc", "rv64gcv", "rva22u64", "x86-64-v2", "x86-64-v3", "amd64", "arm64", "arm64+sve2", "rv64imfdv"}
	propImages = []string{"amd64:1", "amd64v3:1", "arm64:1", "riscv:1", "rva23:1", "multi:1", "mixed:1", "labelled:1", "armv7:1", "private:1"}
	propKeys   = []string{"zone", "disk", "rank", "kubernetes.io/arch", "isa.isamatch.io/arch", "isa.isamatch.io/rv.v"}
	propValues = map[string][]string{
		"zone": {"a", "b", "c"}, "disk": {"ssd", "hdd"}, "rank": {"1", "2", "3", "4", "5"},
		"kubernetes.io/arch": {"amd64", "arm64", "riscv64"}, "isa.isamatch.io/arch": {"amd64", "arm64", "riscv64"},
		"isa.isamatch.io/rv.v": {"true"},
	}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func randomNodes(t *testing.T, r *rand.Rand) map[string]map[string]string {
	nodes := map[string]map[string]string{}
	for k := range 5 + r.IntN(20) {
		var l map[string]string
		if r.IntN(6) == 0 { // not labelled by isamatch yet
			l = map[string]string{isa.KubeArchLabel: pick(r, []string{"amd64", "arm64", "riscv64"})}
		} else {
			native := pick(r, propNative)
			arch := string(testnodes.MustISA(t, native).Arch)
			var emu []string
			if r.IntN(4) == 0 {
				emu = append(emu, pick(r, propReq))
			}
			l = testnodes.Labels(t, arch, native, emu...)
		}
		for _, key := range []string{"zone", "disk", "rank"} {
			if r.IntN(3) > 0 {
				l[key] = pick(r, propValues[key])
			}
		}
		nodes["n"+strconv.Itoa(k)] = l
	}
	return nodes
}

func randomTerm(r *rand.Rand, nodes map[string]map[string]string) corev1.NodeSelectorTerm {
	var t corev1.NodeSelectorTerm
	if r.IntN(15) == 0 {
		return t // matches nothing
	}
	for range 1 + r.IntN(3) {
		key := pick(r, propKeys)
		e := corev1.NodeSelectorRequirement{Key: key}
		switch r.IntN(6) {
		case 0:
			e.Operator, e.Values = corev1.NodeSelectorOpIn, []string{pick(r, propValues[key])}
			if r.IntN(2) == 0 {
				e.Values = append(e.Values, pick(r, propValues[key]))
			}
		case 1:
			e.Operator, e.Values = corev1.NodeSelectorOpNotIn, []string{pick(r, propValues[key])}
		case 2:
			e.Operator = corev1.NodeSelectorOpExists
		case 3:
			e.Operator = corev1.NodeSelectorOpDoesNotExist
		case 4:
			e.Key, e.Operator, e.Values = "rank", corev1.NodeSelectorOpGt, []string{strconv.Itoa(r.IntN(5))}
		case 5:
			e.Key, e.Operator, e.Values = "rank", corev1.NodeSelectorOpLt, []string{strconv.Itoa(1 + r.IntN(5))}
		}
		t.MatchExpressions = append(t.MatchExpressions, e)
	}
	if r.IntN(8) == 0 {
		t.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n" + strconv.Itoa(r.IntN(len(nodes)))}}}
	}
	return t
}

func randomRequest(r *rand.Rand) string {
	parts := []string{pick(r, propReq)}
	for r.IntN(3) == 0 {
		parts = append(parts, pick(r, propReq))
	}
	return strings.Join(parts, " | ")
}

func randomPod(r *rand.Rand, nodes map[string]map[string]string) podSpec {
	p := podSpec{annotations: map[string]string{}}
	if r.IntN(2) == 0 {
		p.annotations[isa.BareRequestAnnotation] = randomRequest(r)
	}
	if r.IntN(5) == 0 {
		p.annotations[isa.BareQEMUAnnotation] = randomRequest(r)
	}
	if r.IntN(6) == 0 {
		p.nodeSelector = map[string]string{"kubernetes.io/arch": pick(r, propValues["kubernetes.io/arch"])}
	}
	p.images = []string{pick(r, propImages)}
	if r.IntN(3) == 0 {
		p.images = append(p.images, pick(r, propImages))
	}
	if r.IntN(3) > 0 {
		p.affinity = &corev1.NodeAffinity{}
		if r.IntN(4) > 0 {
			sel := &corev1.NodeSelector{}
			for range 1 + r.IntN(3) {
				sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, randomTerm(r, nodes))
			}
			p.affinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
		}
		for range r.IntN(3) {
			p.affinity.PreferredDuringSchedulingIgnoredDuringExecution = append(p.affinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: int32(1 + r.IntN(100)), Preference: randomTerm(r, nodes)})
		}
	}
	return p
}

// TestPropertyRequired checks on random clusters, user affinities, requests
// and images that the mutated required affinity admits exactly the nodes
// the pod's own affinity admits AND isamatch's constraint admits (so never a
// node the user excluded), that every admitted labelled node runs the
// request natively, and that admitting the result again changes nothing.
func TestPropertyRequired(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2026))
	const rounds = 400
	var mutated, denied, narrowed int
	for round := range rounds {
		nodes := randomNodes(t, r)
		spec := randomPod(r, nodes)
		name := fmt.Sprintf("round %d", round)
		m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{})

		req := admissionRequest(t, spec.pod())
		resp := m.Handle(t.Context(), req)

		// isamatch's constraint alone: the same pod without user affinity.
		bare := spec
		bare.affinity, bare.nodeSelector = nil, nil
		bareReq := admissionRequest(t, bare.pod())
		bareResp := m.Handle(t.Context(), bareReq)

		if !resp.Allowed {
			denied++
			msg := resp.Result.Message
			if !strings.Contains(msg, "excludes every node") {
				if bareResp.Allowed {
					t.Errorf("%s: denied only with the user's affinity: %s", name, msg)
				}
				continue
			}
			// The user's terms and ours contradict each other: no node
			// can pass both.
			ours := applyPatch(t, bareReq, bareResp)
			for n, l := range nodes {
				if testnodes.Admits(spec.pod(), n, l) && testnodes.Admits(ours, n, l) {
					t.Errorf("%s: denied as contradictory, but node %s passes the user's terms and ours (%v)", name, n, l)
				}
			}
			continue
		}
		mutated++
		original := spec.pod()
		got := applyPatch(t, req, resp)
		ours := applyPatch(t, bareReq, bareResp)
		for n, l := range nodes {
			o, g, w := testnodes.Admits(original, n, l), testnodes.Admits(got, n, l), testnodes.Admits(ours, n, l)
			if g && !o {
				t.Errorf("%s: mutated affinity admits %s, which the pod's own affinity excluded\nuser: %+v\nmutated: %+v", name, n,
					original.Spec.Affinity, got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			}
			if g != (o && w) {
				t.Errorf("%s: node %s admitted=%v, want user(%v) AND isamatch(%v)", name, n, g, o, w)
			}
			if o && !w {
				narrowed++
			}
			// Independent check: admitted labelled nodes run the request.
			if g && spec.annotations[isa.BareQEMUAnnotation] == "" && spec.annotations[isa.BareRequestAnnotation] != "" {
				native, _, ok := isa.NodeFromLabels(l)
				rq, err := isa.ParseRequest(spec.annotations[isa.BareRequestAnnotation])
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					t.Errorf("%s: request %q admitted node %s that isamatch has not labelled", name, spec.annotations[isa.BareRequestAnnotation], n)
				} else if !slices.ContainsFunc(rq.Alternatives, func(a isa.ISA) bool { return isa.Satisfies(native, a) }) {
					t.Errorf("%s: request %q admitted node %s (%s) that does not satisfy it", name, spec.annotations[isa.BareRequestAnnotation], n, native.Short())
				}
			}
		}
		// The user's preferred terms survive, in order, at the front.
		if want := original.Spec.Affinity; want != nil {
			gotPref := got.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			for k, p := range want.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				if k >= len(gotPref) || !cmp.Equal(gotPref[k].Preference, p.Preference, cmpopts.EquateEmpty()) || gotPref[k].Weight != p.Weight {
					t.Errorf("%s: user preferred term %d lost or moved", name, k)
				}
			}
		}
		// Idempotence: mutating twice is mutating once.
		again := m.Handle(t.Context(), admissionRequest(t, got))
		if !again.Allowed || len(patchJSON(t, again)) != 0 {
			t.Errorf("%s: second admission allowed=%v patches=%v", name, again.Allowed, patchJSON(t, again))
		}
	}
	t.Logf("%d rounds: %d mutated, %d denied, %d node exclusions by isamatch", rounds, mutated, denied, narrowed)
	// The generator must exercise both outcomes, or the property says little.
	if mutated < rounds/2 || denied == 0 || narrowed == 0 {
		t.Errorf("generator too narrow: %d mutated, %d denied, %d narrowed", mutated, denied, narrowed)
	}
}
