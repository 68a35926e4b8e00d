package labeler

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/pkg/probe"
)

// BenchmarkProbeAndReconcile measures one labeler pass: probe a fixture host
// root (read cpuinfo, run the fixture gcc scripts, read binfmt_misc) and
// reconcile the Node through controller-runtime's fake client (an
// in-memory API; the envtest suite in test/labeler covers the real API
// server). Goal: under 200 ms per pass.
//
//	go test ./pkg/labeler -run '^$' -bench ProbeAndReconcile -benchmem
func BenchmarkProbeAndReconcile(b *testing.B) {
	cases := []struct {
		name     string
		machines []string
	}{
		{name: "steady/visionfive2", machines: []string{"visionfive2"}},
		{name: "steady/milkv-pioneer-64-harts", machines: []string{"milkv-pioneer"}},
		{name: "steady/paper-node1-cross-gcc", machines: []string{"paper-node1"}},
		{name: "changing/spacemit-k1-vs-lichee-pi-4a", machines: []string{"spacemit-k1", "lichee-pi-4a"}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
			c := fake.NewClientBuilder().WithScheme(newScheme(b)).WithObjects(node).Build()
			i := 0
			for b.Loop() {
				root := filepath.Join("..", "probe", "testdata", bc.machines[i%len(bc.machines)])
				i++
				res, err := probe.Probe(b.Context(), probe.Options{HostRoot: root, Runner: &probe.ExecRunner{Root: root}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Reconcile(b.Context(), c, "n1", Desired{Labels: res.Labels(), Annotations: res.Annotations()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
