package informer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/isamatch/isamatch/pkg/inventory"
)

// Setup registers a metadata-only informer on Nodes with mgr's cache and
// returns the inventory it feeds. The informer starts with the manager;
// the inventory's HasSynced reports whether its handler has seen the
// initial node list.
func Setup(mgr manager.Manager) (*inventory.Inventory, error) {
	// The inventory asks reg only once Setup has returned it, after reg
	// is set below.
	var reg toolscache.ResourceEventHandlerRegistration
	inv := inventory.New(func() bool { return reg.HasSynced() })
	reg, err := addNodeHandler(mgr, setLabels(inv), inv.Delete)
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// SetupEmulators registers a handler on the manager's metadata-only Node
// informer (the one Setup uses) and returns the index it feeds.
func SetupEmulators(mgr manager.Manager) (*inventory.Emulators, error) {
	e := inventory.NewEmulators()
	if _, err := addNodeHandler(mgr, func(m client.Object) { e.Set(m.GetName(), m.GetLabels(), m.GetAnnotations()) }, e.Delete); err != nil {
		return nil, err
	}
	return e, nil
}

// setLabels records a node's labels in inv.
func setLabels(inv *inventory.Inventory) func(client.Object) {
	return func(m client.Object) { inv.Set(m.GetName(), m.GetLabels()) }
}

// addNodeHandler registers set and del on mgr's metadata-only informer on
// Nodes (one informer, however many handlers). The cache starts the
// informer when the manager starts; asking for it now does not block.
func addNodeHandler(mgr manager.Manager, set func(client.Object), del func(name string)) (toolscache.ResourceEventHandlerRegistration, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	informer, err := mgr.GetCache().GetInformer(context.Background(), obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("get node metadata informer: %w", err)
	}
	reg, err := informer.AddEventHandler(nodeHandler(set, del))
	if err != nil {
		return nil, fmt.Errorf("add node event handler: %w", err)
	}
	return reg, nil
}

// nodeHandler calls set on every added or updated node and del on every
// deleted one.
func nodeHandler(setObj func(client.Object), del func(name string)) toolscache.ResourceEventHandlerFuncs {
	set := func(o any) {
		if m, ok := o.(client.Object); ok {
			setObj(m)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, o any) { set(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if m, ok := o.(client.Object); ok {
				del(m.GetName())
			}
		},
	}
}
