// Package configflag refuses the flags the webhook and the labeler no
// longer take: each of their settings is a field of the configuration
// file (pkg/config/v1alpha1). Check is the entry point: given a binary's
// table of removed flags and the fields that replace them, it fails on
// the first one the command line gives, naming the field to set instead.
// The same table is the migration table of the binary's flag reference.
package configflag
