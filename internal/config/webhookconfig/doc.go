// Package webhookconfig is the webhook's configuration file
// (WebhookConfiguration, pkg/config/v1alpha1): Default is its defaults,
// Load and LoadLayers decode a file, or a --config file and its
// --config-dir drop-ins, strictly over them (internal/config does the
// decoding), and Validate checks the values, with the field path of each
// bad one in its error. It is apart from internal/config because its
// defaults and checks come from the webhook's packages, which the labeler
// does not link.
package webhookconfig
