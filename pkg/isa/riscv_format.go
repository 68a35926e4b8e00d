package isa

// RISC-V formatting: LLVM's versioned toString and isamatch's short form.

import (
	"fmt"
	"strconv"
	"strings"
)

// rvString is LLVM's toString: every extension with its default version.
func rvString(xlen int, s ExtSet) string {
	var b strings.Builder
	b.WriteString("rv")
	b.WriteString(strconv.Itoa(xlen))
	first := true
	s.each(func(i int) {
		if i >= len(rvTable) {
			return
		}
		if !first {
			b.WriteByte('_')
		}
		first = false
		e := rvTable[i]
		fmt.Fprintf(&b, "%s%dp%d", e.name, e.major, e.minor)
	})
	return b.String()
}

// rvShort prints single letters run together and multi-letter extensions
// joined by '_', without versions except where a strict parse needs one
// (experimental extensions, the experimental 'y' base).
func rvShort(xlen int, s ExtSet) string {
	var b strings.Builder
	b.WriteString("rv")
	b.WriteString(strconv.Itoa(xlen))
	y := s.has(rv.y)
	ver := func(i int) {
		if rvTable[i].experimental {
			fmt.Fprintf(&b, "%dp%d", rvTable[i].major, rvTable[i].minor)
		}
	}
	if y {
		b.WriteString("y")
		ver(rv.y)
	}
	s.each(func(i int) {
		n := rvTable[i].name
		if len(n) != 1 || i == rv.y || (y && i == rv.i) {
			return
		}
		b.WriteString(n)
		ver(i)
	})
	s.each(func(i int) {
		n := rvTable[i].name
		if len(n) == 1 {
			return
		}
		b.WriteByte('_')
		b.WriteString(n)
		ver(i)
	})
	return b.String()
}
