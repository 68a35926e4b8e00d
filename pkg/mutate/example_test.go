package mutate_test

import (
	"context"
	"encoding/json"
	"fmt"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// The paper's best-fit example: an RV64IMFD task on a cluster with an IMFD
// and an IMFDV node prefers the IMFD node. The pod stores the decision's
// numbers (2 nodes admitted; a tier of weight 100 with 1 group of 1 node,
// then one of weight 40); Explain gives its readable line.
func ExampleNewPodMutator() {
	node := func(s string) map[string]string {
		i, err := isa.Parse(s)
		if err != nil {
			panic(err)
		}
		l := isa.NodeLabels(i, nil)
		l["kubernetes.io/arch"] = string(i.Arch)
		return l
	}
	inv := inventory.NewStatic(map[string]map[string]string{"node3": node("rv64imfd"), "node5": node("rv64imfdv")})
	res := mutate.ImageResolverFunc(func(context.Context, string, registry.PullAuth) ([]registry.Platform, error) {
		return []registry.Platform{{OS: "linux", Architecture: "riscv64"}, {OS: "linux", Architecture: "amd64"}}, nil
	})
	m := mutate.NewPodMutator(res, inv, mutate.Options{})

	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default", Annotations: map[string]string{"isa.request": "rv64imfd"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
	raw, _ := json.Marshal(pod)
	resp := m.Admit(context.Background(), &admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespace: "default",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	})
	fmt.Println("allowed:", resp.Allowed)
	var ops []jsonpatch.Operation
	if err := json.Unmarshal(resp.Patch, &ops); err != nil {
		panic(err)
	}
	for _, p := range ops {
		if p.Path == "/metadata/annotations/isa.isamatch.io~1decision" {
			fmt.Println(p.Value)
		}
	}
	fmt.Println(m.Explain(context.Background(), &pod))
	// Output:
	// allowed: true
	// {"nodes":2,"tiers":[[100,1,1],[40,1,1]]}
	// request="rv64imfd" (annotation isa.request); images: example.com/app:1 [linux/riscv64 linux/amd64]; required: rv64imfd (2 nodes now); tiers: w100 affinity 1.00: 1 group, 1 node (exact fit), w40 affinity 0.40: 1 group, 1 node (+v)
}
