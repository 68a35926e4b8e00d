package isa

// The RISC-V extension table (generated into riscv_table.go) and the bits
// of it that the parser, the closure and the formatting refer to by name.

//go:generate go run ./internal/gen -in testdata/implied.tsv -out riscv_table.go

import "strings"

// rvEntry is one row of the generated RISC-V extension table.
type rvEntry struct {
	name         string
	major, minor int
	experimental bool
	implies      []string
}

// allStdExts is LLVM's RISCVISAUtils::AllStdExts: the single letters that may
// follow the base letter.
const allStdExts = "mafdqlcbkjtpvnh"

// rvInfo holds the RISC-V extension table and the bits the procedural rules
// need. It is built once and never modified.
type rvInfo struct {
	*family
	i, e, y, m, a, f, d, c, v, h, b                   int
	zicsr, zifencei, zicntr                           int
	zca, zcb, zcd, zcf, zce, zcmp, zcmt, zclsd, zilsd int
	zfinx, zve32x, zvfbfmin, zvfbfa, xsfvfbfexp16e    int
	xwchc, xqci, xqccmp, xqccmt, xqciac, xqcicm       int
	xtheadvector                                      int
	zvl, rv32Only, unobservable, vector               ExtSet
	combine                                           []int
}

var rv = newRVInfo()

func newRVInfo() *rvInfo {
	names := make([]string, len(rvTable))
	implies := make(map[string][]string, len(rvTable))
	for k, e := range rvTable {
		names[k] = e.name
		implies[e.name] = e.implies
	}
	r := &rvInfo{family: newFamily("rv", names, implies, nil)}
	b := func(n string) int {
		i, ok := r.index[n]
		if !ok {
			panic("isa: riscv table lacks " + n)
		}
		return i
	}
	r.i, r.e, r.y, r.m, r.a, r.f, r.d, r.c, r.v, r.h, r.b = b("i"), b("e"), b("y"), b("m"), b("a"), b("f"), b("d"), b("c"), b("v"), b("h"), b("b")
	r.zicsr, r.zifencei, r.zicntr = b("zicsr"), b("zifencei"), b("zicntr")
	r.zca, r.zcb, r.zcd, r.zcf, r.zce, r.zcmp, r.zcmt = b("zca"), b("zcb"), b("zcd"), b("zcf"), b("zce"), b("zcmp"), b("zcmt")
	r.zclsd, r.zilsd, r.zfinx, r.zve32x = b("zclsd"), b("zilsd"), b("zfinx"), b("zve32x")
	r.zvfbfmin, r.zvfbfa, r.xsfvfbfexp16e = b("zvfbfmin"), b("zvfbfa"), b("xsfvfbfexp16e")
	r.xwchc, r.xqci, r.xqccmp, r.xqccmt, r.xqciac, r.xqcicm = b("xwchc"), b("xqci"), b("xqccmp"), b("xqccmt"), b("xqciac"), b("xqcicm")
	r.xtheadvector = b("xtheadvector")
	for k, n := range names {
		if strings.HasPrefix(n, "zvl") && strings.HasSuffix(n, "b") {
			r.zvl.set(k)
		}
		if strings.HasPrefix(n, "zve") || n == "v" {
			r.vector.set(k)
		}
		if strings.HasPrefix(n, "xqci") {
			r.rv32Only.set(k)
		}
	}
	r.rv32Only = r.rv32Only.or(r.mustSet("zcf", "zclsd", "zilsd", "xwchc"))
	r.unobservable = r.mustSet(unobservableNames...)
	for _, n := range []string{"zk", "zkn", "zks", "zvkn", "zvknc", "zvkng", "zvks", "zvksc", "zvksg", "zce"} {
		r.combine = append(r.combine, b(n))
	}
	return r
}

// unobservableNames are profile-mandatory extensions that only promise
// memory-system or privileged-mode behaviour: no kernel reports them, so a
// request never has to find them on a node.
var unobservableNames = []string{
	"ziccif", "ziccrse", "ziccamoa", "zicclsm", "za64rs", "za128rs",
	"zic64b", "ziccamoc", "zama16b", "supm",
}

func rvArch(xlen int) Arch {
	if xlen == 32 {
		return RISCV32
	}
	return RISCV64
}

func rvXLEN(a Arch) int {
	if a == RISCV32 {
		return 32
	}
	return 64
}
