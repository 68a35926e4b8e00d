package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/isa"
)

// nsLookupTimeout bounds each read of a namespace's labels at admission:
// first from the cache, then, for a namespace the cache has not seen yet,
// from the API server. Past it the cluster's --enforcement holds.
const nsLookupTimeout = time.Second

// namespaceMeta is a namespace's metadata only: what the cache keeps of
// each namespace (no spec or status).
func namespaceMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("Namespace"))
	m.APIVersion = "v1"
	return m
}

// namespaceEnforcement returns mutate.Options.NamespaceEnforcement: the
// value of a namespace's isa.EnforcementLabel, from a metadata-only cache
// of namespaces that starts with the manager. A namespace the cache has
// not seen yet (created a moment ago) is read from the API server. When
// neither answers within nsLookupTimeout it returns "", and the cluster's
// mode holds.
func namespaceEnforcement(ctx context.Context, mgr manager.Manager) (func(context.Context, string) string, error) {
	if _, err := mgr.GetCache().GetInformer(ctx, namespaceMeta()); err != nil {
		return nil, fmt.Errorf("watch namespaces for %s: %w", isa.EnforcementLabel, err)
	}
	c, live := mgr.GetCache(), mgr.GetAPIReader()
	return func(ctx context.Context, ns string) string {
		ctx, cancel := context.WithTimeout(ctx, nsLookupTimeout)
		defer cancel()
		m := namespaceMeta()
		err := c.Get(ctx, client.ObjectKey{Name: ns}, m)
		if err != nil {
			m = namespaceMeta()
			err = live.Get(ctx, client.ObjectKey{Name: ns}, m)
		}
		if err != nil {
			log.FromContext(ctx).Info("namespace labels unread: the cluster's enforcement holds", "namespace", ns, "error", err.Error())
			return ""
		}
		return m.GetLabels()[isa.EnforcementLabel]
	}, nil
}
