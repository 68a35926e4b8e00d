package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupVersion is the apiVersion of every configuration file here.
var GroupVersion = schema.GroupVersion{Group: "config.isamatch.io", Version: "v1alpha1"}

// The kinds.
const (
	WebhookConfigurationKind = "WebhookConfiguration"
	LabelerConfigurationKind = "LabelerConfiguration"
)
