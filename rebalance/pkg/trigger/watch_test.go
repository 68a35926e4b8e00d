package trigger

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestWatch runs Watch on a fake clientset: nothing in the initial list
// fires, a node that joins afterwards does, and so does a bound pod that
// takes a node over the threshold; a NotReady node does not.
func TestWatch(t *testing.T) {
	busy := node("busy", "4", nil)
	client := fake.NewClientset(busy, node("idle", "4", nil), pod("p0", "busy", "3700m"))
	got := make(chan Reason, 10)
	if err := Watch(t.Context(), client, WatchOptions{NodeJoin: true, Threshold: 90}, func(r Reason) { got <- r }); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	steps := []struct {
		name string
		do   func(context.Context) error
		want *Reason // nil: nothing fires
	}{
		{"a NotReady node is created", func(ctx context.Context) error {
			_, err := client.CoreV1().Nodes().Create(ctx, notReady(node("late", "4", nil)), metav1.CreateOptions{})
			return err
		}, nil},
		{"it turns Ready", func(ctx context.Context) error {
			_, err := client.CoreV1().Nodes().UpdateStatus(ctx, node("late", "4", nil), metav1.UpdateOptions{})
			return err
		}, &Reason{Kind: NodeJoin, Node: "late"}},
		{"a pod takes idle to 95%", func(ctx context.Context) error {
			_, err := client.CoreV1().Pods("default").Create(ctx, pod("p1", "idle", "3800m"), metav1.CreateOptions{})
			return err
		}, &Reason{Kind: Threshold, Node: "idle"}},
		{"another pod on busy, already above", func(ctx context.Context) error {
			_, err := client.CoreV1().Pods("default").Create(ctx, pod("p2", "busy", "100m"), metav1.CreateOptions{})
			return err
		}, nil},
	}
	for _, s := range steps {
		if err := s.do(ctx); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.want == nil {
			continue
		}
		select {
		case r := <-got:
			if diff := cmp.Diff(*s.want, r); diff != "" {
				t.Errorf("%s: fired (-want +got):\n%s", s.name, diff)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing fired, want %+v", s.name, *s.want)
		}
	}
	// The steps that must not fire, checked once every event has been
	// handled: a marker node created last fires, and nothing before it.
	if _, err := client.CoreV1().Nodes().Create(ctx, node("marker", "4", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if diff := cmp.Diff(Reason{Kind: NodeJoin, Node: "marker"}, r); diff != "" {
			t.Errorf("fired besides the expected (-want +got):\n%s", diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the marker node did not fire")
	}
}

func TestTrim(t *testing.T) {
	p := pod("p", "a", "1")
	p.Annotations = map[string]string{"big": "value"}
	p.Spec.Containers[0].Image = "image"
	p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "SECRET", Value: "x"}}
	got, err := trim(p)
	if err != nil {
		t.Fatal(err)
	}
	want := pod("p", "a", "1")
	want.Spec.Containers[0].Resources = p.Spec.Containers[0].Resources
	if diff := cmp.Diff(runtime.Object(want), got.(runtime.Object)); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
	// A node keeps what usable reads, its lifecycle taints included: a
	// node still tainted not-ready has not joined.
	n := taintedNotReady(node("n", "4", map[string]string{"a": "b"}))
	n.Annotations = map[string]string{"big": "value"}
	n.Status.Images = []v1.ContainerImage{{Names: []string{"image"}}}
	gotNode, err := trim(n)
	if err != nil {
		t.Fatal(err)
	}
	wantNode := taintedNotReady(node("n", "4", map[string]string{"a": "b"}))
	if diff := cmp.Diff(runtime.Object(wantNode), gotNode.(runtime.Object)); diff != "" {
		t.Errorf("trimmed node (-want +got):\n%s", diff)
	}
}

// TestWatchTenantAttacks runs Watch with the shipped defaults against the
// two ways a tenant or a node owner could drive cycles: a node whose group
// label its owner flips again and again, and pods pushed over the CPU
// threshold, taken off, and pushed over again. Each starts one cycle, not
// one per change.
func TestWatchTenantAttacks(t *testing.T) {
	const flips = 5
	owned := node("owned", "4", map[string]string{isa.GroupLabel: "rv64imfd"})
	client := fake.NewClientset(owned, node("hot", "4", nil), pod("base", "hot", "3500m"))
	got := make(chan Reason, 2*flips+2)
	if err := Watch(t.Context(), client, DefaultOptions().Watch(90, labels.Everything()), func(r Reason) { got <- r }); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range flips {
		n := owned.DeepCopy()
		n.Labels[isa.GroupLabel] = []string{"rv64imfdv", "rv64imfd"}[i%2]
		if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// 3.5 + 0.2 of 4 CPUs is 92.5%, 3.5 alone 87.5%: over and back
		// under the threshold, never under the re-arm line.
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod("push", "hot", "200m"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().Pods("default").Delete(ctx, "push", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A marker node created last fires once every event before it has
	// been handled.
	if _, err := client.CoreV1().Nodes().Create(ctx, node("marker", "4", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	counts := map[Reason]int{}
	for done := false; !done; {
		select {
		case r := <-got:
			counts[r]++
			done = r.Node == "marker"
		case <-time.After(10 * time.Second):
			t.Fatalf("the marker node did not fire; fired so far: %v", counts)
		}
	}
	want := map[Reason]int{{Kind: NodeJoin, Node: "owned"}: 1, {Kind: Threshold, Node: "hot"}: 1, {Kind: NodeJoin, Node: "marker"}: 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("cycles started after %d label flips and %d pushes over the threshold (-want +got):\n%s", flips, flips, diff)
	}
}
