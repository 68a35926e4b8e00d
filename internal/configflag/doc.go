// Package configflag binds a binary's deprecated flags to the fields of
// its configuration file (pkg/config/v1alpha1), with the defaults the
// configuration struct holds when they are registered, so that flags and
// file share one source of defaults. Flags is the entry point: Bind
// registers the flags, Overlay applies the flags given on the command line
// over a loaded file, and Errors words a validation error as the flag or
// the field path the bad value came from.
package configflag
