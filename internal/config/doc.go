// Package config loads the versioned configuration files of isamatch's
// components (pkg/config/v1alpha1), which hold every setting but the
// binaries' few flags: ReadLayers reads a --config file and its
// --config-dir drop-ins, Decode and DecodeLayers decode them strictly over
// the defaults, checking apiVersion and kind, and Errors words a
// validation error with the file that set the field. The labeler's
// configuration is here (DefaultLabeler, LoadLabeler, LoadLabelerLayers,
// ValidateLabeler); the webhook's is in internal/config/webhookconfig.
package config
