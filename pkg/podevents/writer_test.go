package podevents

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/isamatch/isamatch/internal/heaptest"
)

func podObjRef(name string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "team", Name: name, UID: types.UID("uid-" + name), FieldPath: "spec.containers{app}"}
}

// fastBackoff makes the test's retries quick.
func fastBackoff(t *testing.T) {
	old := writeBackoff
	writeBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}
	t.Cleanup(func() { writeBackoff = old })
}

// TestWriterEvent: the Event is the one client-go's recorder would write.
func TestWriterEvent(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	m := NewMetrics()
	w := NewWriter(c, scheme.Scheme, ReportingController, m, logr.Discard())
	now := time.Date(2026, 11, 29, 6, 0, 0, 123456000, time.UTC)
	w.clock = clocktesting.NewFakePassiveClock(now)
	w.Eventf(podObjRef("p"), nil, corev1.EventTypeWarning, ReasonImageUnresolved, action, "image %q: %s", "x", "why")

	var list eventsv1.EventList
	if err := c.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d Events written, want 1", len(list.Items))
	}
	ev := list.Items[0]
	host := strings.TrimPrefix(ev.ReportingInstance, ReportingController+"-")
	checks := []struct {
		what string
		ok   bool
	}{
		{"name: the pod's and the time in hex", ev.Name == "p."+strconv.FormatInt(now.UnixNano(), 16)},
		{"namespace: the pod's", ev.Namespace == "team"},
		{"event time", ev.EventTime.Time.Equal(now)},
		{"reporting controller and instance", ev.ReportingController == ReportingController && host != ev.ReportingInstance},
		{"action, reason, type", ev.Action == action && ev.Reason == ReasonImageUnresolved && ev.Type == corev1.EventTypeWarning},
		{"regarding: the container", ev.Regarding == *podObjRef("p")},
		{"no related object, no series", ev.Related == nil && ev.Series == nil},
		{"note formatted", ev.Note == `image "x": why`},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.what, ev)
		}
	}
	if got := testutil.ToFloat64(m.Failed); got != 0 {
		t.Errorf("failed %v, want 0", got)
	}

	// A type the API refuses is not sent.
	w.Eventf(podObjRef("q"), nil, "Odd", ReasonDecided, action, "n")
	if got := testutil.ToFloat64(m.Failed); got != 1 {
		t.Errorf("after an Event of type Odd: failed %v, want 1", got)
	}
}

// TestWriterRetries: an attempt that failed for a passing reason is made
// again; a refusal is not; a failure that lasts is given up and counted.
func TestWriterRetries(t *testing.T) {
	fastBackoff(t)
	gr := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	for _, tc := range []struct {
		name         string
		errs         []error // the answers before success
		wantAttempts int
		wantFailed   float64
	}{
		{"throttled, then written", []error{apierrors.NewTooManyRequests("slow down", 1)}, 2, 0},
		{"a broken connection, then written", []error{errors.New("connection reset by peer"), apierrors.NewServiceUnavailable("restarting")}, 3, 0},
		{"refused as invalid", []error{apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "p.1", nil)}, 1, 1},
		{"already there", []error{apierrors.NewAlreadyExists(gr, "p.1")}, 1, 0},
		{"still failing after every attempt", []error{apierrors.NewInternalError(errors.New("a")), apierrors.NewInternalError(errors.New("b")), apierrors.NewInternalError(errors.New("c"))}, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					n := int(attempts.Add(1))
					if n <= len(tc.errs) {
						return tc.errs[n-1]
					}
					return c.Create(ctx, obj, opts...)
				},
			}).Build()
			m := NewMetrics()
			NewWriter(c, scheme.Scheme, ReportingController, m, logr.Discard()).Eventf(podObjRef("p"), nil, corev1.EventTypeNormal, ReasonDecided, action, "n")
			if got := int(attempts.Load()); got != tc.wantAttempts {
				t.Errorf("%d attempts, want %d", got, tc.wantAttempts)
			}
			if got := testutil.ToFloat64(m.Failed); got != tc.wantFailed {
				t.Errorf("failed %v, want %v", got, tc.wantFailed)
			}
		})
	}
}

// discard takes every Event and keeps none.
type discard struct{ n atomic.Int64 }

func (d *discard) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	d.n.Add(1)
	return e, nil
}
func (d *discard) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return e, nil
}
func (d *discard) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return e, nil
}

// TestWriterHoldsNothing writes 5,000 decided pods' Events and measures
// what stays on the heap once they are written: nothing per Event with
// the Writer. client-go's broadcaster, which recorded them before, keeps
// each for six minutes or more to merge repeats, which these Events never
// are; it is measured beside it for the record.
func TestWriterHoldsNothing(t *testing.T) {
	const n = 5000
	note := strings.Repeat("required affinity: 1750 nodes now; tiers: w100 1750 nodes (3 groups) ", 4)
	record := func(rec EventRecorder) {
		for k := range n {
			rec.Eventf(podObjRef("pod-"+strconv.Itoa(k)), nil, corev1.EventTypeNormal, ReasonDecided, action, "%s", note)
		}
	}

	var creates atomic.Int64
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			creates.Add(1)
			return nil
		},
	}).Build()
	w := NewWriter(c, scheme.Scheme, ReportingController, nil, logr.Discard())
	record(w) // warm
	before := heaptest.Live()
	record(w)
	writer := (float64(heaptest.Live()) - float64(before)) / n

	sink := &discard{}
	b := events.NewBroadcaster(sink)
	if err := b.StartRecordingToSinkWithContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	rec := b.NewRecorder(scheme.Scheme, ReportingController)
	before = heaptest.Live()
	// In steps its queue (1,000 Events, dropped past it) takes.
	const step = 500
	for k := 0; k < n; k += step {
		for j := k; j < k+step; j++ {
			rec.Eventf(podObjRef("pod-"+strconv.Itoa(j)), nil, corev1.EventTypeNormal, ReasonDecided, action, "%s", note)
		}
		if err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return sink.n.Load() == int64(k+step), nil
		}); err != nil {
			t.Fatalf("client-go's broadcaster wrote %d of %d Events: %v", sink.n.Load(), k+step, err)
		}
	}
	broadcaster := (float64(heaptest.Live()) - float64(before)) / n

	t.Logf("heap held per written Event: Writer %.1f bytes, client-go's broadcaster %.1f", writer, broadcaster)
	if creates.Load() != 2*n {
		t.Fatalf("Writer created %d Events, want %d", creates.Load(), 2*n)
	}
	if writer > 16 {
		t.Errorf("the Writer holds %.1f bytes per Event it wrote; want at most 16 (it keeps nothing)", writer)
	}
}
