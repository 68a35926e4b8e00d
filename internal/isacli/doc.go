// Package isacli holds the offline commands isactl and kubectl-isa share:
// [Normalize] prints the canonical and short forms of an ISA string and
// [Match] whether a node ISA satisfies a request. Both take the command's
// arguments and report usage errors wrapped in [ErrUsage].
package isacli
