// Package config loads the versioned configuration files of isamatch's
// components (pkg/config/v1alpha1): DefaultWebhook and DefaultLabeler are
// the defaults, the one source the binaries' flags take theirs from too;
// LoadWebhook and LoadLabeler decode a file strictly over them, checking
// its apiVersion and kind; ValidateWebhook and ValidateLabeler check the
// values, with the field path of each bad one in its error.
package config
