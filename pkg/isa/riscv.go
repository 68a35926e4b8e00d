package isa

//go:generate go run ./internal/gen -in testdata/implied.tsv -out riscv_table.go

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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

// Unobservable lists the RISC-V extensions that Satisfies and Requirements
// ignore in a request because Linux never reports them (memory-system
// guarantees of the profiles with no user-visible trace). They stay in an
// ISA's extension list for display.
func Unobservable() []string {
	out := make([]string, len(unobservableNames))
	copy(out, unobservableNames)
	return out
}

// profile is one RISC-V profile and the extension string LLVM expands it to.
type profile struct {
	name         string
	march        string
	experimental bool
}

const (
	rva20u64Base = "rv64i_m_a_f_d_c_zicsr_zicntr_ziccif_ziccrse_ziccamoa_zicclsm"
	rva22u64     = rva20u64Base + "_za64rs_zihpm_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zfhmin_zkt"
	rva23u64     = rva22u64 + "_v_zvfhmin_zvbb_zvkt_zihintntl_zicond_zimop_zcmop_zcb_zfa_zawrs_supm"
	rvb23u64     = rva20u64Base + "_zihpm_za64rs_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zkt_zihintntl_zicond_zimop_zcmop_zcb_zfa_zawrs"
	rva20s64Base = "_zifencei_svbare_svade_ssccptr_sstvecd_sstvala"
	rva22s64Base = rva20s64Base + "_sscounterenw_svpbmt_svinval"
	rva23s64     = rva23u64 + rva22s64Base + "_svnapot_sstc_sscofpmf_ssnpm_ssu64xl_sha"
	rvb23s64     = rvb23u64 + "_zifencei_svnapot_svbare_svade_ssccptr_sstvecd_sstvala_sscounterenw_svpbmt_svinval_sstc_sscofpmf_ssu64xl"
)

// profiles follows LLVM RISCVProfiles.td (see testdata/profiles.txt).
var profiles = []profile{
	{name: "rvi20u32", march: "rv32i"},
	{name: "rvi20u64", march: "rv64i"},
	{name: "rva20u64", march: rva20u64Base + "_za128rs"},
	{name: "rva20s64", march: rva20u64Base + "_za128rs" + rva20s64Base},
	{name: "rva22u64", march: rva22u64},
	{name: "rva22s64", march: rva22u64 + rva22s64Base},
	{name: "rva23u64", march: rva23u64},
	{name: "rva23s64", march: rva23s64},
	{name: "rvb23u64", march: rvb23u64},
	{name: "rvb23s64", march: rvb23s64},
	{name: "rvm23u32", march: "rv32i_m_b_zicond_zihintpause_zihintntl_zce_zicbop_zimop_zcmop", experimental: true},
	{name: "rva23p1s64", march: rva23s64, experimental: true},
	{name: "rvb23p1s64", march: rvb23s64, experimental: true},
}

// Profiles lists the RISC-V profile names Parse and ParseRISCV accept.
func Profiles() []string {
	out := make([]string, len(profiles))
	for k, p := range profiles {
		out[k] = p.name
	}
	return out
}

func findProfile(s string) (profile, bool) {
	for _, p := range profiles {
		if strings.HasPrefix(s, p.name) {
			return p, true
		}
	}
	return profile{}, false
}

// rvOptions mirror the flags of LLVM's parseArchString.
type rvOptions struct {
	experimental bool // EnableExperimentalExtension
	versionCheck bool // ExperimentalExtensionVersionCheck
}

var llvmMC = rvOptions{experimental: true, versionCheck: true}

// llvmRank is the rank of RISCVISAUtils::compareExtension for any name;
// multi-letter names with an unknown prefix sort last.
func llvmRank(s string) int {
	single := func(c byte) int {
		switch c {
		case 'i':
			return 0
		case 'e':
			return 1
		}
		if p := strings.IndexByte(allStdExts, c); p >= 0 {
			return p + 2
		}
		return 2 + len(allStdExts) + int(c) - 'a'
	}
	switch {
	case s == "":
		return 1 << 10
	case len(s) == 1:
		return single(s[0])
	case s[0] == 's':
		return 1 << 7
	case s[0] == 'x':
		return 1 << 8
	case s[0] == 'z':
		return 1<<6 | single(s[1])
	}
	return 1 << 9
}

// llvmLess is LLVM's canonical extension order.
func llvmLess(a, b string) bool {
	if ra, rb := llvmRank(a), llvmRank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

func rvErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) string {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return s[:n]
}

func typeDesc(c byte) string {
	switch c {
	case 's':
		return "standard supervisor-level extension"
	case 'x':
		return "non-standard user-level extension"
	}
	return "standard user-level extension"
}

// lastNonVersion is LLVM's findLastNonVersionCharacter.
func lastNonVersion(ext string) int {
	pos := len(ext) - 1
	for pos > 0 && isDigit(ext[pos]) {
		pos--
	}
	if pos > 0 && ext[pos] == 'p' && isDigit(ext[pos-1]) {
		pos--
		for pos > 0 && isDigit(ext[pos]) {
			pos--
		}
	}
	return pos
}

// extError is an error about one extension name; its text is LLVM's.
type extError struct {
	msg  string
	name string
}

func (e *extError) Error() string { return e.msg }

func unsupportedExt(name string) error {
	if len(name) == 1 {
		return &extError{fmt.Sprintf("unsupported standard user-level extension '%s'", name), name}
	}
	return &extError{fmt.Sprintf("unsupported %s '%s'", typeDesc(name[0]), name), name}
}

// rvHintFor adds "did you mean" suggestions to the generic hint when err is
// about an unknown extension name.
func rvHintFor(err error) string {
	var e *extError
	if !errors.As(err, &e) || len(e.name) < 2 {
		return rvHint
	}
	if s := suggest(e.name, rv.names); len(s) > 0 {
		return "did you mean " + strings.Join(s, " or ") + "? " + rvHint
	}
	return rvHint
}

// suggest returns up to three known names within edit distance 2 of name,
// closest first.
func suggest(name string, known []string) []string {
	type cand struct {
		name string
		d    int
	}
	if name == "" {
		return nil
	}
	var cs []cand
	for _, k := range known {
		if len(k) > 1 && k[0] == name[0] {
			if d := editDistance(name, k); d <= 2 {
				cs = append(cs, cand{k, d})
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// rvVersion is LLVM's getExtensionVersion: it validates the version that
// follows ext in in and returns how many bytes it used.
func rvVersion(ext, in string, o rvOptions) (int, error) {
	majorStr := leadingDigits(in)
	rest := in[len(majorStr):]
	minorStr := ""
	if majorStr != "" && strings.HasPrefix(rest, "p") {
		minorStr = leadingDigits(rest[1:])
		if minorStr == "" {
			return 0, rvErr("minor version number missing after 'p' for extension '%s'", ext)
		}
	}
	var major, minor int
	var err error
	if majorStr != "" {
		if major, err = strconv.Atoi(majorStr); err != nil {
			return 0, rvErr("Failed to parse major version number for extension '%s'", ext)
		}
	}
	if minorStr != "" {
		if minor, err = strconv.Atoi(minorStr); err != nil {
			return 0, rvErr("Failed to parse minor version number for extension '%s'", ext)
		}
	}
	consumed := len(majorStr)
	if minorStr != "" {
		consumed += len(minorStr) + 1
	}
	verText := majorStr
	if minorStr != "" {
		verText += "." + minorStr
	}
	idx, known := rv.index[ext]
	if known && rvTable[idx].experimental {
		e := rvTable[idx]
		if !o.experimental {
			return 0, rvErr("requires '-menable-experimental-extensions' for experimental extension '%s'", ext)
		}
		if o.versionCheck && majorStr == "" {
			return 0, rvErr("experimental extension requires explicit version number `%s`", ext)
		}
		if o.versionCheck && (major != e.major || minor != e.minor) {
			return 0, rvErr("unsupported version number %s for experimental extension '%s' (this compiler supports %d.%d)", verText, ext, e.major, e.minor)
		}
		return consumed, nil
	}
	if ext == "g" || majorStr == "" {
		return consumed, nil
	}
	if known && rvTable[idx].major == major && rvTable[idx].minor == minor {
		return consumed, nil
	}
	if !known {
		return 0, unsupportedExt(ext)
	}
	return 0, rvErr("unsupported version number %s for extension '%s'", verText, ext)
}

// nextRVToken splits the next '_'-separated token off a non-empty rest of an
// ISA string.
func nextRVToken(rest string) (tok, after string, err error) {
	if rest[0] == '_' {
		if len(rest) == 1 || rest[1] == '_' {
			return "", "", rvErr("extension name missing after separator '_'")
		}
		rest = rest[1:]
	}
	tok = rest
	if k := strings.IndexByte(rest, '_'); k >= 0 {
		tok = rest[:k]
	}
	return tok, rest[len(tok):], nil
}

// checkRVChars is LLVM's first lexical check of an ISA string.
func checkRVChars(s string) error {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if !(isDigit(c) || (c >= 'a' && c <= 'z') || c == '_') {
			return rvErr("string may only contain [a-z0-9_]")
		}
	}
	return nil
}

// parseRISCV is LLVM's RISCVISAInfo::parseArchString followed by
// postProcessAndChecking. It returns the XLEN and the closed extension set.
func parseRISCV(s string, o rvOptions) (int, ExtSet, error) {
	var none ExtSet
	if err := checkRVChars(s); err != nil {
		return 0, none, err
	}
	xlen := 0
	rest := s
	switch {
	case strings.HasPrefix(s, "rv32"):
		xlen, rest = 32, s[4:]
	case strings.HasPrefix(s, "rv64"):
		xlen, rest = 64, s[4:]
	default:
		if p, ok := findProfile(s); ok {
			if p.experimental && !o.experimental {
				return 0, none, rvErr("requires '-menable-experimental-extensions' for profile '%s'", p.name)
			}
			tail := s[len(p.name):]
			if tail != "" && tail[0] != '_' {
				return 0, none, rvErr("additional extensions must be after separator '_'")
			}
			return parseRISCV(p.march+tail, o)
		}
	}
	if xlen == 0 || rest == "" {
		return 0, none, rvErr("string must begin with rv32{i,e,g,y}, rv64{i,e,g,y}, or a supported profile name")
	}
	var seen ExtSet
	base := rest[0]
	rest = rest[1:]
	isG := false
	switch base {
	case 'i', 'e', 'y':
		n, err := rvVersion(string(base), rest, o)
		if err != nil {
			return 0, none, err
		}
		seen.set(rv.index[string(base)])
		rest = rest[n:]
	case 'g':
		if rest != "" && isDigit(rest[0]) {
			return 0, none, rvErr("version not supported for 'g'")
		}
		isG = true
		for _, n := range []int{rv.i, rv.m, rv.a, rv.f, rv.d} {
			seen.set(n)
		}
	default:
		return 0, none, rvErr("first letter after 'rv%d' should be 'e', 'i', 'g' or 'y'", xlen)
	}
	for rest != "" {
		tok, after, err := nextRVToken(rest)
		if err != nil {
			return 0, none, err
		}
		rest = after
		for tok != "" {
			var name, vers, desc string
			single := false
			switch c := tok[0]; {
			case strings.IndexByte(allStdExts, c) >= 0:
				name, vers, desc, single = tok[:1], tok[1:], "standard user-level extension", true
			case c == 'z' || c == 's' || c == 'x':
				desc = typeDesc(c)
				pos := lastNonVersion(tok) + 1
				name, vers = tok[:pos], tok[pos:]
				tok = ""
				if len(name) == 1 {
					return 0, none, rvErr("%s name missing after '%c'", desc, c)
				}
			default:
				return 0, none, rvErr("invalid standard user-level extension '%c'", c)
			}
			n, err := rvVersion(name, vers, o)
			if err != nil {
				return 0, none, err
			}
			if single {
				tok = vers[n:]
			}
			idx, ok := rv.index[name]
			if !ok {
				return 0, none, unsupportedExt(name)
			}
			if seen.has(idx) {
				return 0, none, rvErr("duplicated %s '%s'", desc, name)
			}
			seen.set(idx)
		}
	}
	if isG {
		seen.set(rv.zicsr)
		seen.set(rv.zifencei)
	}
	exts := rvPostProcess(xlen, seen)
	if err := rvCheck(xlen, exts); err != nil {
		return 0, none, err
	}
	return xlen, exts, nil
}

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

// ParseRISCV parses a RISC-V ISA string with LLVM RISCVISAInfo::parseArchString
// semantics (newest LLVM, experimental extensions enabled with their exact
// version, as llvm-mc does), applying implications. Lower case only, as LLVM.
// The one addition to LLVM's table is xtheadvector (GCC's name for T-Head's
// vector 0.7.1), which LLVM does not know.
func ParseRISCV(s string) (ISA, error) {
	xlen, exts, err := parseRISCV(s, llvmMC)
	if err != nil {
		return ISA{}, &ParseError{Input: s, Err: err, Hint: rvHintFor(err)}
	}
	return ISA{Arch: rvArch(xlen), Exts: exts}, nil
}

const rvHint = "accepted: rv32/rv64 then i, e or g, single letters m a f d q c b v h, then '_'-separated z*/s*/x* extensions (e.g. rv64gcv_zba_zbb), or a profile: rvi20u32 rvi20u64 rva20u64 rva22u64 rva23u64 rvb23u64 rva20s64 rva22s64 rva23s64 rvb23s64"

// ParseError is returned by every strict parser: it names the input, the
// reason (naming the bad token) and what is accepted.
type ParseError struct {
	Input string
	Err   error
	Hint  string
}

func (e *ParseError) Error() string {
	if e.Hint == "" {
		return fmt.Sprintf("isa: %q: %v", e.Input, e.Err)
	}
	return fmt.Sprintf("isa: %q: %v (%s)", e.Input, e.Err, e.Hint)
}

func (e *ParseError) Unwrap() error { return e.Err }

var errEmpty = errors.New("empty ISA string")
