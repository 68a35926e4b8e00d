package isa

// The RISC-V closure: implications of the table, LLVM's procedural rules
// (default i, C+D gives Zcd, umbrellas, ...) and its dependency checks.

import "strings"

// rvPostProcess is LLVM's updateImplication + updateCombination: default i,
// the table closure, and the procedural rules.
func rvPostProcess(xlen int, s ExtSet) ExtSet {
	hasE, hasI := s.has(rv.e), s.has(rv.i)
	if !hasE && !hasI {
		s.set(rv.i)
	}
	if hasE && hasI {
		s.clear(rv.i)
	}
	s = rv.close(s)
	y := s.has(rv.y)
	if s.has(rv.c) && s.has(rv.d) && !s.has(rv.zcd) && !(y && xlen == 64) {
		s = s.or(rv.closure[rv.zcd])
	}
	if xlen == 32 && !y && s.has(rv.c) && s.has(rv.f) && !s.has(rv.zcf) {
		s = s.or(rv.closure[rv.zcf])
	}
	if xlen == 32 && !y && s.has(rv.zce) && s.has(rv.f) && !s.has(rv.zcf) {
		s = s.or(rv.closure[rv.zcf])
	}
	if s.has(rv.zca) && !s.has(rv.c) {
		addC := true
		if xlen == 32 && !y && s.has(rv.f) && !s.has(rv.zcf) {
			addC = false
		}
		if s.has(rv.d) && !s.has(rv.zcd) && !(y && xlen == 64) {
			addC = false
		}
		if addC {
			s.set(rv.c)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, u := range rv.combine {
			if s.has(u) {
				continue
			}
			need := rv.direct[u]
			if u == rv.zce && xlen == 32 && !y && s.has(rv.f) {
				need.set(rv.zcf)
			}
			if need.subsetOf(s) {
				s.set(u)
				changed = true
			}
		}
	}
	return s
}

// rvNodeClose is rvPostProcess plus one isamatch rule: Zba+Zbb+Zbs make B.
// Kernels print the three, profiles (RVA22/23) and users name B; LLVM's
// parser (ParseRISCV) does not combine them, every other entry point does.
func rvNodeClose(xlen int, s ExtSet) ExtSet {
	s = rvPostProcess(xlen, s)
	if rv.direct[rv.b].subsetOf(s) {
		s.set(rv.b)
	}
	return s
}

// rvCheck is LLVM's checkDependency (strict parsing only).
func rvCheck(xlen int, s ExtSet) error {
	incompatible := func(a, b string) error {
		return rvErr("'%s' and '%s' extensions are incompatible", a, b)
	}
	if s.has(rv.i) && s.has(rv.e) {
		return incompatible("i", "e")
	}
	if s.has(rv.f) && s.has(rv.zfinx) {
		return incompatible("f", "zfinx")
	}
	if !s.and(rv.zvl).subsetOf(ExtSet{}) && !s.has(rv.zve32x) {
		return rvErr("'zvl*b' requires 'v' or 'zve*' extension to also be specified")
	}
	if s.has(rv.y) {
		bad := []string{"zcf", "zclsd"}
		if xlen == 64 {
			bad = []string{"zcd", "zcmt", "zcmp", "xqccmp"}
		}
		for _, n := range bad {
			if s.has(rv.index[n]) {
				return rvErr("'%s' is incompatible with rv%dy base", n, xlen)
			}
		}
	}
	if s.has(rv.d) && (s.has(rv.c) || s.has(rv.zcd)) {
		for _, n := range []int{rv.zcmt, rv.zcmp, rv.xqci, rv.xqccmp, rv.xqciac, rv.xqcicm} {
			if s.has(n) {
				return incompatible(rv.names[n], "zcd")
			}
		}
	}
	if xlen != 32 && s.has(rv.zcf) {
		return rvErr("'zcf' is only supported for 'rv32'")
	}
	if s.has(rv.xwchc) {
		if xlen != 32 {
			return rvErr("'xwchc' is only supported for 'rv32'")
		}
		if s.has(rv.d) {
			return incompatible("d", "xwchc")
		}
		if s.has(rv.zcb) {
			return incompatible("xwchc", "zcb")
		}
	}
	if s.has(rv.zclsd) {
		if xlen != 32 {
			return rvErr("'zclsd' is only supported for 'rv32'")
		}
		if s.has(rv.zcf) {
			return incompatible("zclsd", "zcf")
		}
	}
	if xlen != 32 && s.has(rv.zilsd) {
		return rvErr("'zilsd' is only supported for 'rv32'")
	}
	if xlen != 32 {
		if s.has(rv.xqci) {
			return rvErr("'xqci' is only supported for 'rv32'")
		}
		var err error
		s.and(rv.rv32Only).each(func(i int) {
			if err == nil && strings.HasPrefix(rv.names[i], "xqci") {
				err = rvErr("'%s' is only supported for 'rv32'", rv.names[i])
			}
		})
		if err != nil {
			return err
		}
	}
	if s.has(rv.zcmp) && s.has(rv.xqccmp) {
		return incompatible("zcmp", "xqccmp")
	}
	if s.has(rv.zcmt) && s.has(rv.xqccmt) {
		return incompatible("zcmt", "xqccmt")
	}
	if s.has(rv.xsfvfbfexp16e) && !s.has(rv.zvfbfmin) && !s.has(rv.zvfbfa) {
		return rvErr("'xsfvfbfexp16e' requires 'zvfbfmin' or 'zvfbfa' extension to also be specified")
	}
	if s.has(rv.xtheadvector) && !s.and(rv.vector).subsetOf(ExtSet{}) {
		return rvErr("'xtheadvector' (vector 0.7.1) and 'v'/'zve*' (vector 1.0) extensions are incompatible")
	}
	return nil
}
