package trigger

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
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
}
