package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestScaleNodes: the scale cluster has the nodes asked for, in the mix's
// shares, and the oracle reads every node's ISA and every load request (a
// scale run judges 100,000 pods with them: it must not fail at the end).
func TestScaleNodes(t *testing.T) {
	nodes, native, err := scaleNodes(1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1000 || len(native) != 1000 {
		t.Fatalf("%d nodes, %d ISAs, want 1000", len(nodes), len(native))
	}
	byGroup := map[string]int{}
	zones := map[string]map[string]bool{} // group -> zones
	for name, l := range nodes {
		byGroup[l[isa.GroupLabel]]++
		if zones[l[isa.GroupLabel]] == nil {
			zones[l[isa.GroupLabel]] = map[string]bool{}
		}
		zones[l[isa.GroupLabel]][l[corev1.LabelTopologyZone]] = true
		o, err := oracle.Parse(native[name].String())
		if err != nil {
			t.Fatalf("oracle cannot read node %s's ISA: %v", name, err)
		}
		if string(native[name].Arch) != o.Arch || l[isa.KubeArchLabel] != o.Arch {
			t.Errorf("node %s: arch %s, oracle %s, label %s", name, native[name].Arch, o.Arch, l[isa.KubeArchLabel])
		}
		for _, r := range requestMix {
			if _, err := podNeeds(r, o.Arch); err != nil {
				t.Errorf("request %q on %s: %v", r, o.Arch, err)
			}
		}
	}
	if len(byGroup) != len(scaleMix) {
		t.Errorf("%d groups, want %d", len(byGroup), len(scaleMix))
	}
	// Each machine's nodes lie in every zone, as a managed cluster's.
	for g, z := range zones {
		if len(z) != 3 || z[""] {
			t.Errorf("group %s in zones %v, want zone-a, zone-b and zone-c", g, z)
		}
	}
	// Every request of the load has nodes that serve it.
	for _, r := range requestMix[1:] {
		needs, _ := oracle.ParseRequest(r)
		served := false
		for name := range native {
			o, _ := oracle.Parse(native[name].String())
			for _, n := range needs {
				served = served || oracle.Satisfies(o, n)
			}
		}
		if !served {
			t.Errorf("no node of the scale mix serves request %q", r)
		}
	}
	// The joining group is new.
	j, err := oracle.Parse(joinISA)
	if err != nil {
		t.Fatal(err)
	}
	for name := range native {
		if o, _ := oracle.Parse(native[name].String()); oracle.Satisfies(o, j) {
			t.Errorf("node %s already has %s: the join row would count it", name, joinISA)
		}
	}
}
