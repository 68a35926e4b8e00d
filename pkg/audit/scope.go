package audit

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Scope says which pods the webhook decides: those its
// MutatingWebhookConfiguration sends it (namespace and object selectors)
// and that it does not skip itself (SkipNamespaces, mirror pods,
// isa.IgnoreLabel). The zero Scope holds every pod but those it skips.
type Scope struct {
	// NamespaceSelector and ObjectSelector are the webhook's (nil: every
	// namespace, every pod).
	NamespaceSelector labels.Selector
	ObjectSelector    labels.Selector
	// SkipNamespaces are the namespaces the webhook leaves alone.
	SkipNamespaces []string
	// NamespaceLabels returns a namespace's labels; nil, or false for a
	// namespace it does not know, uses the label the API server sets on
	// every namespace (kubernetes.io/metadata.name) alone.
	NamespaceLabels func(ns string) (map[string]string, bool)
}

// DefaultSkipNamespaces are the namespaces the shipped webhook skips
// besides its own.
var DefaultSkipNamespaces = []string{metav1.NamespaceSystem}

// ScopeFrom builds a Scope from the webhook entry named webhook of mwc (the
// first one when webhook is empty) and the namespaces the webhook skips.
func ScopeFrom(mwc *admissionregistrationv1.MutatingWebhookConfiguration, webhook string, skip []string) (Scope, error) {
	s := Scope{SkipNamespaces: skip}
	for _, wh := range mwc.Webhooks {
		if webhook != "" && wh.Name != webhook {
			continue
		}
		var err error
		if wh.NamespaceSelector != nil {
			if s.NamespaceSelector, err = metav1.LabelSelectorAsSelector(wh.NamespaceSelector); err != nil {
				return s, fmt.Errorf("webhook %s: namespaceSelector: %w", wh.Name, err)
			}
		}
		if wh.ObjectSelector != nil {
			if s.ObjectSelector, err = metav1.LabelSelectorAsSelector(wh.ObjectSelector); err != nil {
				return s, fmt.Errorf("webhook %s: objectSelector: %w", wh.Name, err)
			}
		}
		return s, nil
	}
	return s, fmt.Errorf("MutatingWebhookConfiguration %s has no webhook %q", mwc.Name, webhook)
}

// Handles reports whether the webhook decides pod.
func (s Scope) Handles(pod *corev1.Pod) bool {
	switch {
	case pod.Annotations[corev1.MirrorPodAnnotationKey] != "",
		pod.Labels[isa.IgnoreLabel] == "true",
		slices.Contains(s.SkipNamespaces, pod.Namespace):
		return false
	case s.ObjectSelector != nil && !s.ObjectSelector.Matches(labels.Set(pod.Labels)):
		return false
	}
	if s.NamespaceSelector == nil {
		return true
	}
	nsLabels := map[string]string{corev1.LabelMetadataName: pod.Namespace}
	if s.NamespaceLabels != nil {
		if l, ok := s.NamespaceLabels(pod.Namespace); ok {
			nsLabels = l
		}
	}
	return s.NamespaceSelector.Matches(labels.Set(nsLabels))
}
