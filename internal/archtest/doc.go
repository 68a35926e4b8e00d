// Package archtest enforces the import rules of ARCHITECTURE.md: its test
// lists every package of both modules with `go list` and fails on an import
// the map forbids (the pure core linking Kubernetes libraries, a binary
// linking a test framework, a package importing one above its layer). The
// rules are [Rules]; a rule broken today, whose fix waits on a planned
// split, is an [Allowance] that the test also fails on once it is no longer
// needed. [Check] applies them to a package graph.
package archtest
