package labeler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestPrune(t *testing.T) {
	mk := func(name string, labels, annotations map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	}
	foreignLabels := map[string]string{isa.KubeArchLabel: "riscv64", "team": "a", "isa.isamatch.io.example/x": "kept"}
	foreignAnnotations := map[string]string{"note": "keep"}
	with := func(m map[string]string, extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	nodes := []client.Object{
		mk("labelled",
			with(foreignLabels, map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.v": "true", isa.EmuPrefix + "riscv64": "true"}),
			with(foreignAnnotations, map[string]string{isa.NativeISAAnnotation: "rv64gcv", isa.NativeSourceAnnotation: "cpuinfo"})),
		mk("foreign-only", foreignLabels, foreignAnnotations),
		mk("bare", nil, nil),
	}
	c := &countingClient{Client: fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(nodes...).Build()}
	got, err := Prune(t.Context(), c)
	if err != nil {
		t.Fatalf("Prune(): %v", err)
	}
	if diff := cmp.Diff([]Pruned{{Node: "labelled", Labels: 3, Annotations: 2}}, got); diff != "" {
		t.Errorf("Prune() (-want +got):\n%s", diff)
	}
	if len(c.patches) != 1 {
		t.Errorf("patches = %v, want one, for the labelled node only", c.patches)
	}
	for _, name := range []string{"labelled", "foreign-only"} {
		n := &corev1.Node{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: name}, n); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(foreignLabels, n.Labels); diff != "" {
			t.Errorf("%s labels (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(foreignAnnotations, n.Annotations); diff != "" {
			t.Errorf("%s annotations (-want +got):\n%s", name, diff)
		}
	}
}
