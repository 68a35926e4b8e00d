// Package docgen writes the generated reference under docs/reference/ from
// the code itself: the label, annotation and gate keys of pkg/isa with their
// doc comments (Keys), the Prometheus metrics every package declares
// (Metrics), and the flags of each binary (FlagTable, filled by a test in
// each cmd package, which alone can call its package main's parseArgs).
//
// Check compares a generated file with the committed one, or rewrites it,
// so each reference test fails when code and docs drift and names the
// command that regenerates them (RegenerateCommand).
//
// Only tests import this package: binaries never link it.
package docgen
