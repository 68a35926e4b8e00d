package inventory

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// labels returns the labels the labeler and the kubelet put on a node with
// the given native ISA and emulation capabilities ("" native: unlabelled).
func labels(t testing.TB, arch, native string, emulated ...string) map[string]string {
	t.Helper()
	l := map[string]string{isa.KubeArchLabel: arch, "kubernetes.io/hostname": "x"}
	if native == "" {
		return l
	}
	n, err := isa.Parse(native)
	if err != nil {
		t.Fatalf("parse %q: %v", native, err)
	}
	var emu []isa.ISA
	for _, e := range emulated {
		i, err := isa.Parse(e)
		if err != nil {
			t.Fatalf("parse %q: %v", e, err)
		}
		emu = append(emu, i)
	}
	for k, v := range isa.NodeLabels(n, emu) {
		l[k] = v
	}
	return l
}

// groupView is a Group as tests compare it.
type groupView struct {
	ID, Native string
	Emulated   []string
	Nodes      int
}

func view(t testing.TB, s *engine.Snapshot) ([]groupView, map[string]int, int) {
	t.Helper()
	var out []groupView
	for _, g := range s.Groups {
		v := groupView{ID: g.ID, Native: g.Native.Short(), Nodes: g.Nodes}
		for _, e := range g.Emulated {
			v.Emulated = append(v.Emulated, e.Short())
		}
		out = append(out, v)
	}
	return out, s.ArchNodes, s.Nodes
}

func gid(t testing.TB, s string) string {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return isa.GroupID(i)
}

func short(t testing.TB, s string) string {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return i.Short()
}

func TestInventory(t *testing.T) {
	type op struct {
		name   string
		labels map[string]string // nil: delete
	}
	imfd, imfdv, x86 := gid(t, "rv64imfd"), gid(t, "rv64imfdv"), gid(t, "x86-64-v3")
	tests := []struct {
		name      string
		static    map[string]map[string]string
		ops       []op
		want      []groupView
		wantArch  map[string]int
		wantNodes int
	}{
		{
			name: "paper cluster groups",
			static: map[string]map[string]string{
				"node1": labels(t, "amd64", "x86-64-v3", "rv64imfdv"),
				"node2": labels(t, "arm64", ""),
				"node3": labels(t, "riscv64", "rv64imfd"),
				"node4": labels(t, "riscv64", "rv64imfdv"),
				"node5": labels(t, "riscv64", "rv64imfdv"),
			},
			want: sorted(
				groupView{ID: x86, Native: "x86-64-v3", Emulated: []string{short(t, "rv64imfdv")}, Nodes: 1},
				groupView{ID: imfd, Native: short(t, "rv64imfd"), Nodes: 1},
				groupView{ID: imfdv, Native: short(t, "rv64imfdv"), Nodes: 2},
			),
			wantArch:  map[string]int{"amd64": 1, "arm64": 1, "riscv64": 3},
			wantNodes: 5,
		},
		{
			name: "add, relabel, delete",
			ops: []op{
				{"a", labels(t, "riscv64", "rv64imfd")},
				{"b", labels(t, "riscv64", "rv64imfd")},
				{"c", labels(t, "riscv64", "")},
				{"a", labels(t, "riscv64", "rv64imfdv")}, // upgraded
				{"c", labels(t, "riscv64", "rv64imfdv")}, // labelled late
				{"b", nil},
				{"missing", nil},
			},
			want:      []groupView{{ID: imfdv, Native: short(t, "rv64imfdv"), Nodes: 2}},
			wantArch:  map[string]int{"riscv64": 2},
			wantNodes: 2,
		},
		{
			name: "same native ISA, different emulation: two groups, one id",
			ops: []op{
				{"a", labels(t, "amd64", "x86-64-v3")},
				{"b", labels(t, "amd64", "x86-64-v3", "rv64imfdv")},
				{"c", labels(t, "amd64", "x86-64-v3", "rv64imfdv")},
			},
			want: []groupView{
				{ID: x86, Native: "x86-64-v3", Nodes: 1},
				{ID: x86, Native: "x86-64-v3", Emulated: []string{short(t, "rv64imfdv")}, Nodes: 2},
			},
			wantArch:  map[string]int{"amd64": 3},
			wantNodes: 3,
		},
		{
			name:      "last node of a group leaves",
			ops:       []op{{"a", labels(t, "riscv64", "rv64imfd")}, {"a", nil}},
			wantArch:  map[string]int{},
			wantNodes: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := NewStatic(tc.static)
			for _, o := range tc.ops {
				if o.labels == nil {
					inv.Delete(o.name)
				} else {
					inv.Set(o.name, o.labels)
				}
			}
			got, gotArch, gotNodes := view(t, inv.Snapshot())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantArch, gotArch); diff != "" {
				t.Errorf("arch nodes (-want +got):\n%s", diff)
			}
			if gotNodes != tc.wantNodes {
				t.Errorf("nodes = %d, want %d", gotNodes, tc.wantNodes)
			}
		})
	}
}

// sorted orders group views as snapshots do (by id, then ISA text).
func sorted(g ...groupView) []groupView {
	for i := range g {
		for j := i + 1; j < len(g); j++ {
			if g[j].ID < g[i].ID {
				g[i], g[j] = g[j], g[i]
			}
		}
	}
	return g
}

func TestSnapshotOnLabelUpdates(t *testing.T) {
	inv := NewStatic(map[string]map[string]string{"a": labels(t, "riscv64", "rv64imfd")})
	before := inv.Snapshot()
	l := labels(t, "riscv64", "rv64imfd")
	inv.Set("a", labels(t, "riscv64", "rv64imfd")) // a status update: the same labels
	if inv.Snapshot() != before {
		t.Errorf("an update with the same labels built a new snapshot")
	}
	l["topology.kubernetes.io/zone"] = "z1" // not ours: the same groups, parsed once
	inv.Set("a", l)
	if got, want := inv.Snapshot().Groups, before.Groups; len(got) != 1 || got[0].ID != want[0].ID || got[0].Members[0].Labels["topology.kubernetes.io/zone"] != "z1" || len(inv.parsed) != 1 {
		t.Errorf("after a zone label: groups %+v, %d parsed label sets; want the same group with the zone in its member's labels, 1 parse", got, len(inv.parsed))
	}
	inv.Set("a", labels(t, "riscv64", "rv64imfdv"))
	if inv.Snapshot() == before {
		t.Errorf("an ISA change kept the old snapshot")
	}
	if got := before.Groups[0].Nodes; got != 1 {
		t.Errorf("old snapshot was modified: nodes = %d", got)
	}
}

// TestNewReportsItsFeed: an inventory fed by events is synced when its
// feed says so; a static one always is.
func TestNewReportsItsFeed(t *testing.T) {
	listed := false
	inv := New(func() bool { return listed })
	if inv.HasSynced() {
		t.Error("HasSynced before the feed listed the nodes")
	}
	inv.Set("a", labels(t, "riscv64", "rv64imfd"))
	listed = true
	if !inv.HasSynced() {
		t.Error("HasSynced false once the feed listed the nodes")
	}
	if got, _, n := view(t, inv.Snapshot()); len(got) != 1 || n != 1 {
		t.Errorf("groups %v, nodes %d; want one group, 1 node", got, n)
	}
	if !New(nil).HasSynced() || !NewStatic(nil).HasSynced() {
		t.Error("an inventory without a feed is not synced")
	}
}

func BenchmarkSet(b *testing.B) {
	nodes := map[string]map[string]string{}
	for k := range 5000 {
		nodes[fmt.Sprintf("n%d", k)] = labels(b, "riscv64", "rv64imfd")
	}
	inv := NewStatic(nodes)
	l := labels(b, "riscv64", "rv64imfd")
	for b.Loop() {
		inv.Set("n1", l) // heartbeat-style update: no change
	}
}

func TestGroupDomainLabelSharesTheParse(t *testing.T) {
	nodes := map[string]map[string]string{}
	for k := range 50 {
		name := fmt.Sprintf("n%02d", k)
		nodes[name] = isa.WithGroupDomain(labels(t, "riscv64", "rv64imfd"), name)
	}
	inv := NewStatic(nodes)
	got, _, n := view(t, inv.Snapshot())
	want := []groupView{{ID: gid(t, "rv64imfd"), Native: short(t, "rv64imfd"), Nodes: 50}}
	if diff := cmp.Diff(want, got); diff != "" || n != 50 {
		t.Errorf("groups (-want +got):\n%s; nodes %d", diff, n)
	}
	if len(inv.parsed) != 1 {
		t.Errorf("%d parsed label sets for 50 nodes of one group, want 1 (the per-node domain label must not split them)", len(inv.parsed))
	}
	l := isa.WithGroupDomain(labels(t, "riscv64", "rv64imfd"), "renamed")
	inv.Set("n00", l)
	if got, _, _ := view(t, inv.Snapshot()); len(inv.parsed) != 1 || !cmp.Equal(want, got) {
		t.Errorf("a change of the domain label alone: %d parsed label sets, groups %+v; want 1 and the same group", len(inv.parsed), got)
	}
}

// TestMembers: each group lists its nodes with all their labels, kept up
// to date when a label isamatch does not own changes, and a status-only
// update (the same labels) builds no new snapshot.
func TestMembers(t *testing.T) {
	withPool := func(pool string) map[string]string {
		l := labels(t, "riscv64", "rv64imfd")
		l["pool"] = pool
		return l
	}
	inv := NewStatic(map[string]map[string]string{"a": withPool("x"), "b": withPool("y"), "c": labels(t, "riscv64", "rv64imfdv")})
	imfd := gid(t, "rv64imfd")
	pools := func() map[string]string {
		out := map[string]string{}
		for _, g := range inv.Snapshot().Groups {
			if g.Nodes != len(g.Members) {
				t.Errorf("group %s: %d nodes, %d members", g.Name, g.Nodes, len(g.Members))
			}
			for _, m := range g.Members {
				out[m.Name] = g.ID + "/" + m.Labels["pool"]
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"a": imfd + "/x", "b": imfd + "/y", "c": gid(t, "rv64imfdv") + "/"}, pools()); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	inv.Set("b", withPool("x"))
	inv.Delete("c")
	if diff := cmp.Diff(map[string]string{"a": imfd + "/x", "b": imfd + "/x"}, pools()); diff != "" {
		t.Errorf("members after a label change and a delete (-want +got):\n%s", diff)
	}
	before := inv.Snapshot()
	inv.Set("a", withPool("x"))
	if inv.Snapshot() != before {
		t.Errorf("an update with the same labels built a new snapshot")
	}
}

func TestEmulators(t *testing.T) {
	labels := func(emulated string) map[string]string {
		native, _ := isa.Parse("x86-64-v3")
		var emu []isa.ISA
		if emulated != "" {
			e, err := isa.Parse(emulated)
			if err != nil {
				t.Fatal(err)
			}
			emu = append(emu, e)
		}
		l := isa.NodeLabels(native, emu)
		if emulated != "" {
			l[isa.EmuExecLabel(isa.RISCV64)] = "true"
		}
		return l
	}
	cpu := func(v string) map[string]string { return map[string]string{isa.QEMUCPUAnnotation(isa.RISCV64): v} }
	e := NewEmulators()
	e.Set("a", labels("rv64gcv"), cpu("rv64,v=true"))
	e.Set("b", labels("rv64gcv_zfh"), cpu("rv64,v=true"))
	e.Set("c", labels("rv64gc"), nil)
	e.Set("d", labels(""), nil)
	cross := labels("rv64gcv")
	delete(cross, isa.EmuExecLabel(isa.RISCV64))
	e.Set("cross", cross, cpu("max")) // a cross compiler alone: no QEMU to set
	q, _ := isa.Parse("rv64gcv")
	if diff := cmp.Diff(map[string]int{"rv64,v=true": 2}, e.QEMUCPUs(q)); diff != "" {
		t.Errorf("QEMUCPUs(rv64gcv) (-want +got):\n%s", diff)
	}
	gc, _ := isa.Parse("rv64gc")
	if diff := cmp.Diff(map[string]int{"rv64,v=true": 2, "": 1}, e.QEMUCPUs(gc)); diff != "" {
		t.Errorf("QEMUCPUs(rv64gc) (-want +got):\n%s", diff)
	}
	if best, ok := e.Best(isa.RISCV64); !ok || best.Short() != mustShort(t, "rv64gcv_zfh") {
		t.Errorf("Best(riscv64) = %s, %v; want rv64gcv_zfh", best.Short(), ok)
	}
	e.Delete("b")
	e.Set("a", labels("rv64gc"), cpu("rv64,v=true"))
	if got := e.QEMUCPUs(q); len(got) != 0 {
		t.Errorf("after node b left and node a lost V: QEMUCPUs(rv64gcv) = %v, want none", got)
	}
	if _, ok := e.Best(isa.ARM64); ok {
		t.Errorf("Best(arm64) found a node; none emulates arm64")
	}
}

func mustShort(t *testing.T, s string) string {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return i.Short()
}
