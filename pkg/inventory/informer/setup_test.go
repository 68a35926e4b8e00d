package informer

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// fakeCache hands out one fake informer and records what it was asked for.
type fakeCache struct {
	cache.Cache
	informer *controllertest.FakeInformer
	asked    []client.Object
}

func (c *fakeCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	c.asked = append(c.asked, obj)
	return c.informer, nil
}

type fakeManager struct {
	manager.Manager
	cache *fakeCache
}

func (m fakeManager) GetCache() cache.Cache { return m.cache }

func TestSetup(t *testing.T) {
	fc := &fakeCache{informer: controllertest.NewFakeInformer()}
	inv, err := Setup(fakeManager{cache: fc})
	if err != nil {
		t.Fatal(err)
	}
	if inv.HasSynced() {
		t.Error("HasSynced before the informer listed the nodes")
	}
	if len(fc.asked) != 1 {
		t.Fatalf("asked for %d informers, want 1", len(fc.asked))
	}
	pom, ok := fc.asked[0].(*metav1.PartialObjectMetadata)
	if !ok {
		t.Fatalf("informer for %T, want a metadata-only *metav1.PartialObjectMetadata", fc.asked[0])
	}
	if diff := cmp.Diff(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, pom.GroupVersionKind()); diff != "" {
		t.Errorf("informer kind (-want +got):\n%s", diff)
	}
	node := func(name string, l map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	fc.informer.Add(node("a", labels(t, "riscv64", "rv64imfd")))
	fc.informer.Add(node("b", labels(t, "amd64", "")))
	fc.informer.Update(node("a", labels(t, "riscv64", "rv64imfd")), node("a", labels(t, "riscv64", "rv64imfdv")))
	got, arch, n := view(t, inv.Snapshot())
	want := []groupView{{ID: gid(t, "rv64imfdv"), Native: short(t, "rv64imfdv"), Nodes: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"riscv64": 1, "amd64": 1}, arch); diff != "" || n != 2 {
		t.Errorf("arch nodes (-want +got):\n%s\nnodes = %d, want 2", diff, n)
	}
	fc.informer.Delete(node("a", nil))
	if got, _, n := view(t, inv.Snapshot()); len(got) != 0 || n != 1 {
		t.Errorf("after delete: groups %v, nodes %d; want none, 1", got, n)
	}
	fc.informer.Synced()
	if !inv.HasSynced() {
		t.Error("HasSynced false once the informer listed the nodes")
	}
}

func TestHandler(t *testing.T) {
	inv := inventory.NewStatic(nil)
	h := nodeHandler(setLabels(inv), inv.Delete)
	node := func(name string, l map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	h.OnAdd(node("a", labels(t, "riscv64", "rv64imfd")), true)
	h.OnAdd(node("b", labels(t, "riscv64", "rv64imfd")), true)
	h.OnUpdate(node("b", labels(t, "riscv64", "rv64imfd")), node("b", labels(t, "riscv64", "rv64imfdv")))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a", Obj: node("a", nil)})
	got, _, n := view(t, inv.Snapshot())
	want := []groupView{{ID: gid(t, "rv64imfdv"), Native: short(t, "rv64imfdv"), Nodes: 1}}
	if diff := cmp.Diff(want, got); diff != "" || n != 1 {
		t.Errorf("groups (-want +got):\n%s\nnodes = %d, want 1", diff, n)
	}
}

// labels returns the labels the labeler and the kubelet put on a node with
// the given native ISA ("" native: unlabelled).
func labels(t *testing.T, arch, native string) map[string]string {
	t.Helper()
	l := map[string]string{isa.KubeArchLabel: arch}
	if native == "" {
		return l
	}
	n, err := isa.Parse(native)
	if err != nil {
		t.Fatalf("parse %q: %v", native, err)
	}
	for k, v := range isa.NodeLabels(n, nil) {
		l[k] = v
	}
	return l
}

// groupView is a Group as tests compare it.
type groupView struct {
	ID, Native string
	Nodes      int
}

// view returns a snapshot's groups, its nodes by architecture and its
// node count.
func view(t *testing.T, s *engine.Snapshot) ([]groupView, map[string]int, int) {
	t.Helper()
	var out []groupView
	for _, g := range s.Groups {
		out = append(out, groupView{ID: g.ID, Native: g.Native.Short(), Nodes: g.Nodes})
	}
	return out, s.ArchNodes, s.Nodes
}

func gid(t *testing.T, s string) string {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return isa.GroupID(i)
}

func short(t *testing.T, s string) string {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return i.Short()
}
