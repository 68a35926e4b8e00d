package labeler

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/pkg/isa"
)

func ptr(s string) *string { return &s }

func TestDiff(t *testing.T) {
	tests := []struct {
		name    string
		current map[string]string
		desired map[string]string
		want    map[string]*string
		wantErr string
	}{
		{
			name:    "nothing changed",
			current: map[string]string{isa.ArchLabel: "riscv64", isa.KubeArchLabel: "riscv64"},
			desired: map[string]string{isa.ArchLabel: "riscv64"},
			want:    map[string]*string{},
		},
		{
			name:    "set new, update changed, delete stale, keep foreign",
			current: map[string]string{isa.NativePrefix + "rv.v": "true", isa.ExtCountLabel: "12", isa.EmuPrefix + "riscv64": "true", "team": "a", "kubernetes.io/hostname": "n1"},
			desired: map[string]string{isa.ExtCountLabel: "14", isa.NativePrefix + "rv.zba": "true"},
			want: map[string]*string{
				isa.ExtCountLabel: ptr("14"), isa.NativePrefix + "rv.zba": ptr("true"),
				isa.NativePrefix + "rv.v": nil, isa.EmuPrefix + "riscv64": nil,
			},
		},
		{
			name:    "nil current",
			desired: map[string]string{isa.ArchLabel: "amd64"},
			want:    map[string]*string{isa.ArchLabel: ptr("amd64")},
		},
		{
			name:    "desired foreign key refused",
			desired: map[string]string{isa.KubeArchLabel: "amd64"},
			wantErr: `desired key "kubernetes.io/arch" is outside`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Diff(tc.current, tc.desired)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Diff() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Diff(): %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergePatch(t *testing.T) {
	c := Change{
		Labels:      map[string]*string{isa.NativePrefix + "rv.v": nil, isa.ArchLabel: ptr("riscv64")},
		Annotations: map[string]*string{isa.NativeISAAnnotation: ptr("rv64gc")},
	}
	got, err := c.MergePatch()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"isa.isamatch.io/isa":"rv64gc"},"labels":{"isa.isamatch.io/arch":"riscv64","isa.isamatch.io/rv.v":null}}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("MergePatch (-want +got):\n%s", diff)
	}
}

// countingClient counts the patches sent through it.
type countingClient struct {
	client.Client
	patches []string
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	c.patches = append(c.patches, string(data))
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func newScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReconcile(t *testing.T) {
	desired := Desired{
		Labels:      map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true"},
		Annotations: map[string]string{isa.NativeISAAnnotation: "rv64imafdc_zba"},
	}
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		wantPatches int
		wantResult  Result
		wantLabels  map[string]string
	}{
		{
			name:        "fresh node gets labels, foreign ones survive",
			labels:      map[string]string{isa.KubeArchLabel: "riscv64", "team": "a"},
			wantPatches: 1,
			wantResult:  Result{Patched: true, Set: 3, Added: []string{isa.ArchLabel, isa.NativePrefix + "rv.zba"}},
			wantLabels:  map[string]string{isa.KubeArchLabel: "riscv64", "team": "a", isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true"},
		},
		{
			name:        "stale label removed",
			labels:      map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true", isa.NativePrefix + "rv.v": "true"},
			annotations: map[string]string{isa.NativeISAAnnotation: "rv64imafdc_zba", isa.EmuISAAnnotation: "rv64gc", "note": "x"},
			wantPatches: 1,
			wantResult:  Result{Patched: true, Deleted: 2, Removed: []string{isa.NativePrefix + "rv.v"}},
			wantLabels:  map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true"},
		},
		{
			name:        "changed value",
			labels:      map[string]string{isa.ArchLabel: "amd64", isa.NativePrefix + "rv.zba": "true"},
			annotations: map[string]string{isa.NativeISAAnnotation: "rv64imafdc_zba"},
			wantPatches: 1,
			wantResult:  Result{Patched: true, Set: 1, Changed: []string{isa.ArchLabel}},
			wantLabels:  map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true"},
		},
		{
			name:        "up to date: no write",
			labels:      map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true", "team": "a"},
			annotations: map[string]string{isa.NativeISAAnnotation: "rv64imafdc_zba"},
			wantLabels:  map[string]string{isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true", "team": "a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: tc.labels, Annotations: tc.annotations}}
			c := &countingClient{Client: fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(node).Build()}
			got, err := Reconcile(t.Context(), c, "n1", desired)
			if err != nil {
				t.Fatalf("Reconcile(): %v", err)
			}
			if got.Node == nil || got.Node.Name != "n1" {
				t.Errorf("Result.Node = %v, want node n1", got.Node)
			}
			if diff := cmp.Diff(tc.wantResult, got, cmpopts.IgnoreFields(Result{}, "Node")); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			if len(c.patches) != tc.wantPatches {
				t.Errorf("patches = %v, want %d", c.patches, tc.wantPatches)
			}
			after := &corev1.Node{}
			if err := c.Get(t.Context(), client.ObjectKey{Name: "n1"}, after); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, after.Labels); diff != "" {
				t.Errorf("labels after (-want +got):\n%s", diff)
			}
			if after.Annotations["note"] != tc.annotations["note"] {
				t.Errorf("foreign annotation changed: %v", after.Annotations)
			}
			// A second pass never writes.
			c.patches = nil
			if _, err := Reconcile(t.Context(), c, "n1", desired); err != nil {
				t.Fatal(err)
			}
			if len(c.patches) != 0 {
				t.Errorf("second pass patched: %v", c.patches)
			}
		})
	}
}

func TestReconcileMissingNode(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	_, err := Reconcile(t.Context(), c, "ghost", Desired{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "get node ghost") {
		t.Fatalf("Reconcile() error = %v, want a wrapped NotFound naming the node", err)
	}
}
