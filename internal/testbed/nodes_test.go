package testbed

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestCreateReadyNodeAfterAConflict: a controller (the labeler, the node
// lifecycle controller) changing the node between its create and the
// Ready status made CreateReadyNode fail with a conflict; it posts the
// status again on the node as it is now.
func TestCreateReadyNodeAfterAConflict(t *testing.T) {
	c := fake.NewClientBuilder().WithStatusSubresource(&corev1.Node{}).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := cl.Create(ctx, obj, opts...); err != nil {
				return err
			}
			var n corev1.Node
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), &n); err != nil {
				return err
			}
			n.Labels = map[string]string{"labeled.by/controller": "true"}
			return cl.Update(ctx, &n)
		},
	}).Build()
	node := MakeNode("n1").CPU("2").Obj()
	if err := CreateReadyNode(t.Context(), c, node); err != nil {
		t.Fatalf("CreateReadyNode: %v", err)
	}
	var got corev1.Node
	if err := c.Get(t.Context(), client.ObjectKey{Name: "n1"}, &got); err != nil {
		t.Fatal(err)
	}
	ready := false
	for _, cond := range got.Status.Conditions {
		ready = ready || cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue
	}
	if !ready || got.Labels["labeled.by/controller"] != "true" {
		t.Errorf("node after CreateReadyNode: Ready %v, labels %v; want Ready and the controller's label kept", ready, got.Labels)
	}
}
