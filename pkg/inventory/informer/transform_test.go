package informer

import (
	"maps"
	"strconv"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/isamatch/isamatch/pkg/isa"
)

// decoded returns node metadata as a decoder leaves it: every string a
// copy of its own.
func decoded(name string, labels, annotations map[string]string) *metav1.PartialObjectMetadata {
	clone := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[string([]byte(k))] = string([]byte(v))
		}
		return out
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: clone(labels), Annotations: clone(annotations),
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
	}}
}

func transform(t *testing.T, tf toolscache.TransformFunc, in any) *metav1.PartialObjectMetadata {
	t.Helper()
	out, err := tf(in)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*metav1.PartialObjectMetadata)
}

func TestNodeTransformKeepsLabelsAndIsamatchAnnotations(t *testing.T) {
	i, err := isa.Parse("x86-64-v3")
	if err != nil {
		t.Fatal(err)
	}
	labels := isa.NodeLabels(i, nil)
	labels["kubernetes.io/hostname"] = "node-a"
	labels["example.com/team"] = "payments"
	annotations := map[string]string{
		isa.NativeISAAnnotation:              "x86-64-v3",
		isa.QEMUCPUAnnotation(isa.RISCV64):   "rv64,v=true",
		"csi.volume.kubernetes.io/nodeid":    `{"ebs.csi.aws.com":"i-0123"}`,
		"node.alpha.kubernetes.io/ttl":       "0",
		"flannel.alpha.coreos.com/public-ip": "10.0.0.1",
	}
	got := transform(t, NodeTransform(), decoded("node-a", labels, annotations))

	if diff := cmp.Diff(labels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	want := map[string]string{
		isa.NativeISAAnnotation:            "x86-64-v3",
		isa.QEMUCPUAnnotation(isa.RISCV64): "rv64,v=true",
	}
	if diff := cmp.Diff(want, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got.ManagedFields != nil {
		t.Errorf("managed fields kept: %v", got.ManagedFields)
	}
	if got.Name != "node-a" {
		t.Errorf("name %q", got.Name)
	}
}

// TestNodeTransformSharesStrings: two nodes with the same labels refer to
// one copy of each key and value once transformed.
func TestNodeTransformSharesStrings(t *testing.T) {
	i, err := isa.Parse("rv64gc_zba_zbb_v")
	if err != nil {
		t.Fatal(err)
	}
	labels := isa.NodeLabels(i, nil)
	tf := NodeTransform()
	a := transform(t, tf, decoded("a", labels, nil))
	b := transform(t, tf, decoded("b", labels, nil))
	data := func(m map[string]string) map[string]*byte {
		out := map[string]*byte{}
		for k, v := range m {
			out["key "+k] = unsafe.StringData(k)
			out["value of "+k] = unsafe.StringData(v)
		}
		return out
	}
	da, db := data(a.Labels), data(b.Labels)
	for k, p := range da {
		if db[k] != p {
			t.Errorf("%s: the two nodes hold copies of their own", k)
		}
	}
	// Without the transform each decoded node has its own copies: the
	// check above would fail.
	raw := data(decoded("c", labels, nil).Labels)
	for k, p := range raw {
		if da[k] == p {
			t.Fatalf("%s: the test's decoded nodes already share strings", k)
		}
	}
}

func TestNodeTransformIdempotentAndTolerant(t *testing.T) {
	tf := NodeTransform()
	once := transform(t, tf, decoded("a", map[string]string{"k": "v"}, map[string]string{"other": "x"}))
	labels, annotations := maps.Clone(once.Labels), maps.Clone(once.Annotations)
	twice := transform(t, tf, once)
	if !maps.Equal(labels, twice.Labels) || !maps.Equal(annotations, twice.Annotations) {
		t.Errorf("a second pass changed the node: %v %v, then %v %v", labels, annotations, twice.Labels, twice.Annotations)
	}
	if twice.Annotations != nil {
		t.Errorf("no isamatch annotation, yet annotations kept: %v", twice.Annotations)
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "a", Obj: once}
	out, err := tf(tomb)
	if err != nil || out != any(tomb) {
		t.Errorf("a tombstone came back as %v, %v", out, err)
	}
}

// TestInternerBound: past maxInterned strings, new ones are returned but
// not kept.
func TestInternerBound(t *testing.T) {
	in := &interner{strings: map[string]string{}}
	for n := range maxInterned + 10 {
		s := strconv.Itoa(n)
		if got := in.intern(s); got != s {
			t.Fatalf("intern(%q) = %q", s, got)
		}
	}
	if len(in.strings) != maxInterned {
		t.Errorf("%d strings kept, want the bound %d", len(in.strings), maxInterned)
	}
}
