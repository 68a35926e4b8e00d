package main

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Bounds of the namespace label lookups admission makes.
const (
	// nsLookupTimeout bounds one read of a namespace; past it the
	// cluster's enforcement holds for that pod.
	nsLookupTimeout = time.Second
	// nsLabelTTL is how long a namespace's label is used before it is
	// read again: a changed label takes effect within it.
	nsLabelTTL = 10 * time.Second
	// nsLabelEntries bounds the namespaces remembered; past it the memory
	// starts again.
	nsLabelEntries = 10000
)

// nsLabels reads a namespace's isa.EnforcementLabel with a GET of its
// metadata (RBAC: get on namespaces) and remembers it for nsLabelTTL.
// Nothing is watched: a webhook whose ClusterRole lacks the permission
// (an older release's, during a roll) only logs and keeps the cluster's
// mode, and its start never waits for a namespace cache to sync.
type nsLabels struct {
	reader client.Reader
	now    func() time.Time
	group  singleflight.Group

	mu   sync.Mutex
	seen map[string]nsLabel
}

type nsLabel struct {
	value string
	at    time.Time
}

func newNSLabels(reader client.Reader) *nsLabels {
	return &nsLabels{reader: reader, now: time.Now, seen: map[string]nsLabel{}}
}

// enforcement returns the value of namespace ns's isa.EnforcementLabel ("" when
// it has none or cannot be read), for mutate.Options.NamespaceEnforcement.
func (l *nsLabels) enforcement(ctx context.Context, ns string) string {
	l.mu.Lock()
	e, ok := l.seen[ns]
	l.mu.Unlock()
	if ok && l.now().Sub(e.at) < nsLabelTTL {
		return e.value
	}
	v, _, _ := l.group.Do(ns, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nsLookupTimeout)
		defer cancel()
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		value := ""
		if err := l.reader.Get(ctx, client.ObjectKey{Name: ns}, m); err != nil {
			log.FromContext(ctx).Info("namespace labels unread: the cluster's enforcement holds", "namespace", ns, "error", err.Error())
		} else {
			value = m.GetLabels()[isa.EnforcementLabel]
		}
		l.mu.Lock()
		if len(l.seen) >= nsLabelEntries {
			l.seen = map[string]nsLabel{}
		}
		l.seen[ns] = nsLabel{value: value, at: l.now()}
		l.mu.Unlock()
		return value, nil
	})
	return v.(string)
}
