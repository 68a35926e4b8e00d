// Package config loads the versioned configuration files of isamatch's
// components (pkg/config/v1alpha1), which hold every setting but the
// binaries' few flags: DefaultWebhook and DefaultLabeler are the defaults;
// LoadWebhook and LoadLabeler decode a file strictly over them, checking
// its apiVersion and kind, and ReadLayers with LoadWebhookLayers and
// LoadLabelerLayers read a --config file and its --config-dir drop-ins;
// ValidateWebhook and ValidateLabeler check the values, with the field
// path of each bad one in its error, which Errors words with the file
// that set it.
package config
