// Package main is the generator of pkg/isa/riscv_table.go: it turns LLVM's
// RISC-V implied-extension table (pkg/isa/testdata/implied.tsv, a copy of the
// reference file with its source header) into one Go entry per extension,
// sorted in LLVM's canonical order (RISCVISAUtils::compareExtension), with
// default version, experimental flag and direct implications, plus the
// isamatch extras listed in main.go (xtheadvector). The transitive closure and
// LLVM's procedural rules are computed by package isa at run time, not here.
//
// Run it with `go generate ./pkg/isa` (the go:generate line is in riscv.go).
package main
