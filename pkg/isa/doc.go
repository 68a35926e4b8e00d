// Package isa is the pure core of isamatch: it parses and normalises
// instruction-set descriptions (RISC-V ISA strings and profiles, x86-64 levels
// and feature flags, arm64 features, OCI platform variants), decides whether a
// node's ISA satisfies a request, ranks fits, and encodes both as Kubernetes
// label keys and node-selector requirements without importing Kubernetes.
//
// The entry points are [ParseRequest] for what users type (strict), the
// node-side parsers [ParseCPUInfoRISCV], [ParseX86Flags] and
// [ParseARM64Features] (tolerant of what real kernels print), [Satisfies] and
// [Affinity] for matching and ranking, and [NodeLabels] / [Requirements] for
// the label schema.
package isa
