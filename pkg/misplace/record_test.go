package misplace

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/isamatch/isamatch/internal/heaptest"
)

func compact(t *testing.T, pod *corev1.Pod) *Record {
	t.Helper()
	obj, err := Compact(pod)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*Record)
}

// TestCompactKeepsWhatSlimKeeps: a record gives back Slim's pod, with the
// container statuses only when they hold a failure.
func TestCompactKeepsWhatSlimKeeps(t *testing.T) {
	failed := decidedFailedPod()
	healthy := typicalPod()
	deleting := typicalPod()
	deleting.DeletionTimestamp = &deleting.CreationTimestamp
	// What few pods have: an API server may set any UID, a newer one a
	// phase this code does not know; a pod object may carry no creation
	// time (one built by hand).
	oddUID, oddPhase, noTime := typicalPod(), typicalPod(), typicalPod()
	oddUID.UID = "not-a-uuid"
	upper := typicalPod()
	upper.UID = types.UID(strings.ToUpper(string(upper.UID)))
	oddPhase.Status.Phase = "Hibernating"
	noTime.CreationTimestamp = metav1.Time{}
	for _, tc := range []struct {
		name       string
		pod        *corev1.Pod
		withStatus bool
	}{
		{"failed container", failed, true}, {"running pod", healthy, false}, {"pod being deleted", deleting, false},
		{"UID not a UUID", oddUID, false}, {"UID a UUID in capitals", upper, false}, {"unknown phase", oddPhase, false}, {"no creation time", noTime, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := Slim(tc.pod)
			want := obj.(*corev1.Pod)
			want.TypeMeta.Kind, want.TypeMeta.APIVersion = "", ""
			if !tc.withStatus {
				want.Status.InitContainerStatuses, want.Status.ContainerStatuses = nil, nil
			}
			rec := compact(t, tc.pod)
			if rec.Failed() != tc.withStatus {
				t.Errorf("Failed() = %v, want %v", rec.Failed(), tc.withStatus)
			}
			if diff := cmp.Diff(want, rec.Pod()); diff != "" {
				t.Errorf("record's pod differs from Slim's (-slim +record):\n%s", diff)
			}
			if diff := cmp.Diff(Detect(tc.pod), Detect(rec.Pod())); diff != "" {
				t.Errorf("Detect differs on the record's pod (-full +record):\n%s", diff)
			}
			key, err := toolscache.MetaNamespaceKeyFunc(rec)
			if want := tc.pod.Namespace + "/" + tc.pod.Name; err != nil || key != want {
				t.Errorf("informer key = %q, %v; want %q", key, err, want)
			}
			if m := rec.GetObjectMeta(); m.GetUID() != tc.pod.UID || m.GetResourceVersion() != tc.pod.ResourceVersion {
				t.Errorf("identity = %s %s, want %s %s", m.GetUID(), m.GetResourceVersion(), tc.pod.UID, tc.pod.ResourceVersion)
			}
		})
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/p"}
	if obj, err := Compact(tomb); err != nil || obj != tomb {
		t.Errorf("Compact(tombstone) = %v, %v; want it unchanged", obj, err)
	}
}

// maxRecordBytes bounds the heap a record of a typical running pod costs
// when its controller has many: 100,000 pods in 20 MB.
const maxRecordBytes = 200

// TestRecordHeap measures the live heap per cached pod, side by side for
// Slim's pods and Compact's records, over the pods of one Deployment, each
// decoded on its own (its strings its own), as an informer receives them.
func TestRecordHeap(t *testing.T) {
	const n = 10000
	perPod := func(transform toolscache.TransformFunc) uint64 {
		before := heaptest.Live()
		keep := make([]any, n)
		for i := range keep {
			pod := typicalPod()
			pod.Name = fmt.Sprintf("web-7d9c8b6f5-%05d", i)
			pod.UID = types.UID(fmt.Sprintf("0d3c6c3e-7f0a-4d8e-9b1a-%012d", i))
			pod.ResourceVersion = fmt.Sprint(100000 + i)
			pod.Namespace, pod.Spec.NodeName = strings.Clone("shop"), fmt.Sprintf("node-%d", i%50)
			var err error
			if keep[i], err = transform(pod); err != nil {
				t.Fatal(err)
			}
		}
		after := heaptest.Live()
		runtime.KeepAlive(keep)
		return (after - before) / n
	}
	slim, rec := perPod(Slim), perPod(Compact)
	t.Logf("live heap per cached pod: Slim's pod %d bytes, Compact's record %d bytes", slim, rec)
	if rec > maxRecordBytes {
		t.Errorf("a record costs %d bytes of heap; the limit is %d", rec, maxRecordBytes)
	}
}
