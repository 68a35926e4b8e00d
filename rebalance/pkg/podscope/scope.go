package podscope

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/descheduler/pkg/api"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
)

// Copy returns deep copies of a plugin argument's namespaces and label
// selector (for DeepCopyObject).
func Copy(ns *api.Namespaces, sel *metav1.LabelSelector) (*api.Namespaces, *metav1.LabelSelector) {
	var nsCopy *api.Namespaces
	if ns != nil {
		nsCopy = &api.Namespaces{
			Include: append([]string(nil), ns.Include...),
			Exclude: append([]string(nil), ns.Exclude...),
		}
	}
	return nsCopy, sel.DeepCopy()
}

// Filter builds the pod filter of plugin: the profile's evictor filter, then
// the namespaces and the label selector.
func Filter(plugin string, handle frameworktypes.Handle, ns *api.Namespaces, sel *metav1.LabelSelector) (podutil.FilterFunc, error) {
	var include, exclude sets.Set[string]
	if ns != nil {
		include, exclude = sets.New(ns.Include...), sets.New(ns.Exclude...)
	}
	filter, err := podutil.NewOptions().
		WithFilter(handle.Evictor().Filter).
		WithNamespaces(include).
		WithoutNamespaces(exclude).
		WithLabelSelector(sel).
		BuildFilterFunc()
	if err != nil {
		return nil, fmt.Errorf("%s: build pod filter: %w", plugin, err)
	}
	return filter, nil
}
