package podevents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeTimeout bounds one attempt to create an Event; writeBackoff spaces
// the attempts at an error worth another (about 8 s in all).
var (
	writeTimeout = 10 * time.Second
	writeBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.25, Steps: 5}
)

// Writer is an EventRecorder that creates each Event (events.k8s.io/v1),
// worded as client-go's recorder words it, with one API call, and keeps
// nothing once it is written. client-go's broadcaster keeps every Event it
// records for six to twelve minutes, to merge a repeat into a series; the
// Events of decided pods never repeat (one of each per pod UID, Reporter),
// so at events.qps the broadcaster's copies were several thousand Events,
// megabytes of the webhook's heap at scale. Eventf blocks until the Event
// is written or given up: call it from the Pacer.
//
// An attempt that fails for a reason that may pass (a timeout, a
// throttled or unavailable API server, a broken connection) is tried
// again, up to writeBackoff's steps; an Event the server refuses as
// malformed, or that is still failing after those, is counted
// (Metrics.Failed) and logged.
type Writer struct {
	client     client.Client
	scheme     *runtime.Scheme
	controller string
	instance   string
	clock      clock.PassiveClock
	metrics    *Metrics
	log        logr.Logger
}

// NewWriter returns a Writer creating Events with c, as reportingController
// (the instance: it and the host's name, as client-go's recorder says).
// m may be nil.
func NewWriter(c client.Client, scheme *runtime.Scheme, reportingController string, m *Metrics, log logr.Logger) *Writer {
	host, _ := os.Hostname()
	return &Writer{client: c, scheme: scheme, controller: reportingController, instance: reportingController + "-" + host,
		clock: clock.RealClock{}, metrics: m, log: log}
}

// Eventf writes the Event.
func (w *Writer) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	ev, err := w.event(regarding, related, eventtype, reason, action, fmt.Sprintf(note, args...))
	if err == nil {
		err = w.write(ev)
	}
	if err != nil {
		w.metrics.failed()
		w.log.Error(err, "Event not written", "reason", reason, "regarding", regarding)
	}
}

// event is the Event client-go's recorder would make.
func (w *Writer) event(regarding, related runtime.Object, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		return nil, fmt.Errorf("event type %q: want Normal or Warning", eventtype)
	}
	ref, err := reference.GetReference(w.scheme, regarding)
	if err != nil {
		return nil, fmt.Errorf("reference to the Event's object: %w", err)
	}
	var rel *corev1.ObjectReference
	if related != nil {
		if rel, err = reference.GetReference(w.scheme, related); err != nil {
			return nil, fmt.Errorf("reference to the Event's related object: %w", err)
		}
	}
	now := w.clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// client-go's name: the object's and the time in hex.
			Name:      fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()),
			Namespace: ns,
		},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: w.controller,
		ReportingInstance:   w.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             rel,
		Note:                note,
		Type:                eventtype,
	}, nil
}

// write creates ev, again on an error that may pass.
func (w *Writer) write(ev *eventsv1.Event) error {
	var last error
	err := wait.ExponentialBackoff(writeBackoff, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		last = w.client.Create(ctx, ev.DeepCopy())
		switch {
		case last == nil, apierrors.IsAlreadyExists(last):
			return true, nil
		case retriable(last):
			return false, nil
		default:
			return false, last
		}
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("after %d attempts: %w", writeBackoff.Steps, last)
	}
	return err
}

// retriable reports whether an attempt that failed with err may succeed
// later: the server was busy, slow or unreachable, not the Event wrong.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // the connection, not the server's answer
	}
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}
