package mutate

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// mixedCluster is 10 ISA groups of 3 nodes each over riscv64, amd64 and
// arm64, labelled as the labeler labels them (the group domain label
// included), each group's nodes in zones in turn (none when zones is
// empty).
func mixedCluster(t testing.TB, zones []string) map[string]map[string]string {
	t.Helper()
	isas := []struct{ arch, s string }{
		{"riscv64", "rv64gc"}, {"riscv64", "rv64gcv"}, {"riscv64", "rv64gc_zba_zbb_zbs"}, {"riscv64", "rva23u64"}, {"riscv64", "rv64imfd"},
		{"amd64", "x86-64-v2"}, {"amd64", "x86-64-v3"}, {"amd64", "x86-64-v4"},
		{"arm64", "arm64"}, {"arm64", "arm64+crc32+atomics+asimdrdm+dcpop"},
	}
	nodes := map[string]map[string]string{}
	for k, i := range isas {
		for n := range 3 {
			name := fmt.Sprintf("node-%02d-%d", k, n)
			nodes[name] = isa.WithGroupDomain(testnodes.Labels(t, i.arch, i.s), name)
			if len(zones) > 0 {
				nodes[name][corev1.LabelTopologyZone] = zones[n%len(zones)]
			}
		}
	}
	return nodes
}

// maxAddedBytes is what isamatch may add to a typical pod as etcd stores it
// (protobuf): its decision annotation, node affinity and spread
// constraints (two when the best-fit nodes lie in several zones).
const maxAddedBytes = 600

// TestAddedBytes measures what admission adds to typical pods of a
// Deployment (one container, labels app=web) on a mixed 10-group cluster,
// unzoned and in three zones, as stored (protobuf, what etcd holds) and
// as JSON (what a patch, kubectl and JSON clients carry), and holds the
// stored size to maxAddedBytes.
func TestAddedBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pod   podSpec
		zones []string
	}{
		{"one image, one request", podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc"), images: []string{"riscv:1"}}, nil},
		{"one single-architecture image", podSpec{images: []string{"amd64:1"}}, nil},
		{"one multi-architecture image", podSpec{images: []string{"multi:1"}}, nil},
		{"one image, one request, three zones", podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc"), images: []string{"riscv:1"}}, []string{"zone-a", "zone-b", "zone-c"}},
		{"one multi-architecture image, three zones", podSpec{images: []string{"multi:1"}}, []string{"zone-a", "zone-b", "zone-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := mixedCluster(t, tc.zones)
			tc.pod.labels = map[string]string{"app": "web"}
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{})
			pod := tc.pod.pod()
			req := admissionRequest(t, pod)
			out := applyPatch(t, req, m.Handle(t.Context(), req))
			before, err := pod.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			after, err := out.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			jb, _ := json.Marshal(pod)
			ja, _ := json.Marshal(out)
			added := len(after) - len(before)
			t.Logf("added %d bytes stored (protobuf), %d as JSON; %d spread constraints; decision %s", added, len(ja)-len(jb), len(out.Spec.TopologySpreadConstraints), out.Annotations[isa.DecisionAnnotation])
			if want := 1 + min(len(tc.zones), 1); len(out.Spec.TopologySpreadConstraints) != want {
				t.Errorf("%d spread constraints, want %d", len(out.Spec.TopologySpreadConstraints), want)
			}
			if added > maxAddedBytes {
				t.Errorf("admission adds %d bytes to the stored pod; the limit is %d", added, maxAddedBytes)
			}
		})
	}
}
