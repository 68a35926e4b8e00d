// Package v1alpha1 holds the versioned configuration files of isamatch's
// components, config.isamatch.io/v1alpha1: WebhookConfiguration for
// cmd/webhook and LabelerConfiguration for cmd/labeler. Package
// internal/config gives their defaults (the ones the binaries' deprecated
// flags take too), loads them strictly and validates them.
//
// The field names are the file's (JSON or YAML, lowerCamelCase); the doc
// comments are its reference.
package v1alpha1
