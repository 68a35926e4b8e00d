package mutate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// GroupLabel is the node label naming a node's native ISA group.
const GroupLabel = isa.NativePrefix + "group"

// ArchLabel is the architecture label the kubelet sets on every node.
const ArchLabel = corev1.LabelArchStable

// Tier weights of preferred terms (see the package documentation for the
// arithmetic). tierBonus[t] is the most a smaller group loses to the largest
// one of the same tier.
var (
	tierWeights     = [...]int32{100, 40, 16, 6, 2}
	tierBonus       = [...]int32{5, 2, 0, 0, 0}
	qemuTierWeights = [...]int32{40, 16, 6, 2}
	qemuTierBonus   = [...]int32{2, 0, 0, 0}
)

// EmulationWeight is the weight of the preferred term for nodes whose
// emulation or cross-compilation capability satisfies isa.qemu.
const EmulationWeight int32 = 100

// ImageInfo is what resolution found for one image reference.
type ImageInfo struct {
	Ref       string
	Platforms []registry.Platform
	Err       error // the platforms are unknown
}

// Input is what a decision is made from.
type Input struct {
	// Request is the native need (annotation isa.request or label ARCH);
	// nil when the pod says nothing. RequestFrom names where it came from
	// and RequestText is what the pod wrote, for messages.
	Request                  *isa.Request
	RequestFrom, RequestText string
	// QEMU is the emulation/cross-compilation need (isa.qemu or QEMU).
	QEMU               *isa.Request
	QEMUFrom, QEMUText string
	// Images in pod order, each reference once.
	Images []ImageInfo
}

// Warning is an admission warning and the metric reason it counts under.
type Warning struct {
	Reason string
	Text   string
}

// Decision is what isamatch adds to a pod.
type Decision struct {
	// Denied, when not empty, is the message the pod is refused with.
	Denied string
	// Required terms are ORed; nil means no constraint.
	Required []corev1.NodeSelectorTerm
	// Preferred terms, highest weight first.
	Preferred []corev1.PreferredSchedulingTerm
	Warnings  []Warning
	// MatchingNodes is how many nodes of the inventory satisfy Required now.
	MatchingNodes int
	// RequiredText describes Required for messages.
	RequiredText string
	// Summary is the readable one-line record for the decision annotation.
	Summary string
}

// alt is one alternative the node must satisfy natively.
type alt struct {
	isa isa.ISA
	// plain: only the architecture is required; expressed with the
	// kubelet's kubernetes.io/arch label so unlabelled nodes qualify. isa
	// then has no extensions.
	plain bool
}

// emuAlt is one alternative of the emulation path: the node emulates q and
// runs the images natively (native.isa.Arch == "" when no image constrains).
type emuAlt struct {
	q      isa.ISA
	native alt
}

// Matcher is the decision logic without Kubernetes I/O: pod inputs and an
// inventory snapshot in, affinity out. It memoises the pure isa functions
// decisions call for the same few ISAs over and over, and the ranking of
// each set of alternatives per snapshot. It is safe for concurrent use.
type Matcher struct {
	baseline map[isa.Arch]isa.ExtSet // FromPlatform(linux, arch, "")
	// base is each architecture's base ISA (rv64i, x86-64, arm64): what a
	// plain-architecture alternative is ranked with.
	base map[isa.Arch]isa.ISA

	cached       atomic.Int64 // entries in the maps below, bounded by maxCached
	platformMemo sync.Map     // registry.Platform (ISARequest "") -> platformISA
	reqMemo      sync.Map     // isaKey -> []corev1.NodeSelectorRequirement (never modified)
	briefMemo    sync.Map     // isaKey -> string

	memo   atomic.Pointer[rankMemo]
	noMemo bool // for benchmarks of the uncached work
}

// maxCached bounds the memo maps; past it, values are computed each time.
const maxCached = 4096

type isaKey struct {
	arch     isa.Arch
	exts     isa.ExtSet
	emulated bool
}

type platformISA struct {
	isa isa.ISA
	err error
}

func (m *Matcher) store(mp *sync.Map, k, v any) {
	if m.cached.Load() < maxCached {
		if _, loaded := mp.LoadOrStore(k, v); !loaded {
			m.cached.Add(1)
		}
	}
}

func (m *Matcher) fromPlatform(p registry.Platform) (isa.ISA, error) {
	p.ISARequest = ""
	if v, ok := m.platformMemo.Load(p); ok {
		r := v.(platformISA)
		return r.isa, r.err
	}
	i, err := isa.FromPlatform(p.OS, p.Architecture, p.Variant)
	m.store(&m.platformMemo, p, platformISA{i, err})
	return i, err
}

// reqs is isa.Requirements as node-selector requirements. The result is
// shared: callers must not modify it.
func (m *Matcher) reqs(i isa.ISA, emulated bool) []corev1.NodeSelectorRequirement {
	k := isaKey{i.Arch, i.Exts, emulated}
	if v, ok := m.reqMemo.Load(k); ok {
		return v.([]corev1.NodeSelectorRequirement)
	}
	r := nodeReqs(isa.Requirements(i, emulated))
	m.store(&m.reqMemo, k, r)
	return r
}

// brief is an ISA for messages: its compact form (isa.ISA.Compact), cut at an extension
// boundary when long.
func (m *Matcher) brief(i isa.ISA) string {
	k := isaKey{arch: i.Arch, exts: i.Exts}
	if v, ok := m.briefMemo.Load(k); ok {
		return v.(string)
	}
	b := briefName(i.Compact())
	m.store(&m.briefMemo, k, b)
	return b
}

// NewMatcher returns a Matcher with empty memos.
func NewMatcher() *Matcher {
	m := &Matcher{baseline: map[isa.Arch]isa.ExtSet{}, base: map[isa.Arch]isa.ISA{}}
	for _, a := range []isa.Arch{isa.AMD64, isa.ARM64, isa.RISCV64, isa.RISCV32} {
		if i, err := isa.FromPlatform("linux", string(a), ""); err == nil {
			m.baseline[a] = i.Exts
		}
	}
	for a, s := range map[isa.Arch]string{isa.AMD64: "x86-64", isa.ARM64: "arm64", isa.RISCV64: "rv64i", isa.RISCV32: "rv32i"} {
		if i, err := isa.Parse(s); err == nil {
			m.base[a] = i
		}
	}
	return m
}

// plainISA is what a plain-architecture alternative is ranked with: the
// architecture's base ISA, so that, as in the paper's affinity, the node with
// the fewest extensions fits a base-ISA task best.
func (m *Matcher) plainISA(a isa.Arch) isa.ISA {
	if b, ok := m.base[a]; ok {
		return b
	}
	return isa.ISA{Arch: a}
}

// imageAlts turns an image's platforms into alternatives; unsupported lists
// the platforms isamatch has no model for.
func (m *Matcher) imageAlts(img ImageInfo, useLabel bool) (alts []alt, unsupported []string, labelErr error) {
	for _, p := range img.Platforms {
		i, err := m.fromPlatform(p)
		if err != nil {
			unsupported = append(unsupported, platformString(p))
			continue
		}
		a := alt{isa: i}
		if base, ok := m.baseline[i.Arch]; ok && base == i.Exts {
			a = alt{isa: m.plainISA(i.Arch), plain: true}
		}
		if !useLabel || p.ISARequest == "" {
			alts = append(alts, a)
			continue
		}
		r, err := isa.ParseRequest(p.ISARequest)
		if err != nil {
			labelErr = err
			alts = append(alts, a)
			continue
		}
		found := false
		for _, ra := range r.Alternatives {
			if u, ok := union(a, alt{isa: ra}); ok {
				alts = append(alts, u)
				found = true
			}
		}
		if !found {
			alts = append(alts, a)
		}
	}
	return minimize(alts), unsupported, labelErr
}

func platformString(p registry.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

func platformsString(ps []registry.Platform) string {
	if len(ps) == 0 {
		return "none"
	}
	parts := make([]string, len(ps))
	for k, p := range ps {
		parts[k] = platformString(p)
	}
	return strings.Join(parts, " ")
}

// union is the alternative both a and b need; ok is false across
// architectures.
func union(a, b alt) (alt, bool) {
	if a.isa.Arch != b.isa.Arch {
		return alt{}, false
	}
	if a.plain {
		return b, true
	}
	if b.plain {
		return a, true
	}
	u, err := isa.Union(a.isa, b.isa)
	if err != nil {
		return alt{}, false
	}
	u.Unknown = nil
	return alt{isa: u}, true
}

// combine is "a AND b" over two OR-lists.
func combine(a, b []alt) []alt {
	var out []alt
	for _, x := range a {
		for _, y := range b {
			if u, ok := union(x, y); ok {
				out = append(out, u)
			}
		}
	}
	return minimize(out)
}

// wider reports whether a admits every node b admits (so b is redundant
// next to a in an OR).
func wider(a, b alt) bool {
	if a.isa.Arch != b.isa.Arch || (b.plain && !a.plain) {
		return false
	}
	if a.plain {
		return true
	}
	return isa.Satisfies(b.isa, a.isa)
}

// minimize drops alternatives another one already covers, keeping order.
func minimize(alts []alt) []alt {
	if len(alts) < 2 {
		return alts
	}
	out := alts[:0:0]
	for j, b := range alts {
		redundant := false
		for i, a := range alts {
			if i != j && wider(a, b) && (!wider(b, a) || i < j) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, b)
		}
	}
	return out
}

func requestAlts(r *isa.Request) []alt {
	alts := make([]alt, 0, len(r.Alternatives))
	for _, a := range r.Alternatives {
		a.Unknown = nil
		alts = append(alts, alt{isa: a})
	}
	return minimize(alts)
}

// Decide turns the inputs into a decision against the inventory snapshot.
func (m *Matcher) Decide(in Input, snap *inventory.Snapshot) Decision {
	var d Decision
	podAsks := in.Request != nil || in.QEMU != nil

	// Images: the node needs ANY platform of each image, ALL images.
	type constrained struct {
		img  ImageInfo
		alts []alt
	}
	var imgs []constrained
	var combo []alt
	for _, img := range in.Images {
		if img.Err != nil {
			d.Warnings = append(d.Warnings, Warning{"imageError",
				fmt.Sprintf("image %q: platforms unknown (%s), placed without its constraint", img.Ref, errorText(img.Err))})
			continue
		}
		alts, unsupported, labelErr := m.imageAlts(img, !podAsks)
		if labelErr != nil {
			d.Warnings = append(d.Warnings, Warning{"imageLabel",
				fmt.Sprintf("image %q: label isa.request ignored: %v", img.Ref, labelErr)})
		}
		if len(alts) == 0 {
			d.Warnings = append(d.Warnings, Warning{"imageUnsupported",
				fmt.Sprintf("image %q: no platform isamatch models (%s), placed without its constraint", img.Ref, strings.Join(unsupported, " "))})
			continue
		}
		if len(imgs) == 0 {
			combo = alts
		} else {
			next := combine(combo, alts)
			if len(next) == 0 {
				d.Denied = fmt.Sprintf("the pod's images have no common architecture: image %q runs on %s, but the images before it need %s; use multi-platform images that share an architecture",
					img.Ref, platformsString(img.Platforms), m.altsString(combo))
				return d
			}
			combo = next
		}
		imgs = append(imgs, constrained{img, alts})
	}

	// Native path: the request (or, in the QEMU flow, the emulation request
	// served natively as the fallback) combined with the images.
	nativeReq, from, text := in.Request, in.RequestFrom, in.RequestText
	if nativeReq == nil && in.QEMU != nil {
		nativeReq, from, text = in.QEMU, in.QEMUFrom, in.QEMUText
	}
	var native []alt
	switch {
	case nativeReq != nil:
		native = requestAlts(nativeReq)
		if len(imgs) > 0 {
			native = combine(native, combo)
		}
	case len(imgs) > 0:
		native = combo
	}
	if nativeReq != nil && len(native) == 0 && in.QEMU == nil {
		cur := requestAlts(nativeReq)
		for _, c := range imgs {
			if cur = combine(cur, c.alts); len(cur) == 0 {
				d.Denied = fmt.Sprintf("%s %q cannot be served by image %q, built for %s; use an image built for the requested ISA or change %s",
					from, text, c.img.Ref, platformsString(c.img.Platforms), from)
				return d
			}
		}
		// Unreachable: native is empty only when some image empties it.
		d.Denied = fmt.Sprintf("%s %q cannot be served by the pod's images", from, text)
		return d
	}

	// Emulation path (isa.qemu): the node emulates q and runs the images.
	var emu []emuAlt
	if in.QEMU != nil {
		for _, q := range requestAlts(in.QEMU) {
			if len(imgs) == 0 {
				emu = append(emu, emuAlt{q: q.isa})
				continue
			}
			for _, n := range combo {
				emu = append(emu, emuAlt{q: q.isa, native: n})
			}
		}
	}

	d.Required = m.requiredTerms(emu, native)
	r := m.rank(snap, in.QEMU, emu, native)
	d.MatchingNodes, d.Preferred = r.matching, r.preferred
	d.RequiredText = m.requiredString(emu, native)
	if len(d.Required) > 0 && d.MatchingNodes == 0 {
		d.Warnings = append(d.Warnings, Warning{"noNode",
			"no node satisfies " + d.RequiredText + " now; the pod stays Pending until such a node joins"})
	}
	d.Summary = m.summary(in, r.tiers, d)
	return d
}

func errorText(err error) string {
	var re *registry.Error
	s := err.Error()
	if errors.As(err, &re) {
		s = re.Kind + ": " + re.Err.Error()
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func errorKind(err error) string {
	var re *registry.Error
	if errors.As(err, &re) {
		return re.Kind
	}
	if errors.Is(err, errBudget) {
		return "timeout"
	}
	return "other"
}

func nodeReqs(reqs []isa.Requirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, len(reqs))
	for k, r := range reqs {
		out[k] = corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: slices.Sorted(slices.Values(r.Values))}
		if len(r.Values) == 0 {
			out[k].Values = nil
		}
	}
	return out
}

func archIn(arches []string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: ArchLabel, Operator: corev1.NodeSelectorOpIn, Values: arches}
}

// plainArches returns the sorted architectures of the plain alternatives.
func plainArches(alts []alt) []string {
	var out []string
	for _, a := range alts {
		if a.plain && !slices.Contains(out, string(a.isa.Arch)) {
			out = append(out, string(a.isa.Arch))
		}
	}
	slices.Sort(out)
	return out
}

// requiredTerms: emulation terms first, then native; plain architectures
// share one kubernetes.io/arch In term.
func (m *Matcher) requiredTerms(emu []emuAlt, native []alt) []corev1.NodeSelectorTerm {
	var terms []corev1.NodeSelectorTerm
	add := func(t corev1.NodeSelectorTerm) {
		for _, have := range terms {
			if termKey(have) == termKey(t) {
				return
			}
		}
		terms = append(terms, t)
	}
	for k := 0; k < len(emu); {
		q := emu[k].q
		var plain []string
		for ; k < len(emu) && emu[k].q.Exts == q.Exts && emu[k].q.Arch == q.Arch; k++ {
			n := emu[k].native
			switch {
			case n.isa.Arch == "":
				add(corev1.NodeSelectorTerm{MatchExpressions: m.reqs(q, true)})
			case n.plain:
				if !slices.Contains(plain, string(n.isa.Arch)) {
					plain = append(plain, string(n.isa.Arch))
				}
			default:
				add(corev1.NodeSelectorTerm{MatchExpressions: slices.Concat(m.reqs(q, true), m.reqs(n.isa, false))})
			}
		}
		if len(plain) > 0 {
			slices.Sort(plain)
			add(corev1.NodeSelectorTerm{MatchExpressions: slices.Concat(m.reqs(q, true), []corev1.NodeSelectorRequirement{archIn(plain)})})
		}
	}
	if p := plainArches(native); len(p) > 0 {
		add(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{archIn(p)}})
	}
	for _, n := range native {
		if !n.plain {
			add(corev1.NodeSelectorTerm{MatchExpressions: m.reqs(n.isa, false)})
		}
	}
	return terms
}

func emuMatches(g *inventory.Group, emu []emuAlt) bool {
	for _, e := range emu {
		ok := e.native.isa.Arch == "" ||
			(e.native.plain && g.Native.Arch == e.native.isa.Arch) ||
			(!e.native.plain && isa.Satisfies(g.Native, e.native.isa))
		if !ok {
			continue
		}
		for _, em := range g.Emulated {
			if isa.Satisfies(em, e.q) {
				return true
			}
		}
	}
	return false
}

// ranking is the inventory-dependent part of a decision.
type ranking struct {
	matching  int
	preferred []corev1.PreferredSchedulingTerm // shared: never modified
	tiers     string                           // for the summary
}

// rankMemo memoises rankings for one snapshot: pods of one workload ask the
// same thing, and the snapshot changes only when a node's ISA does.
type rankMemo struct {
	snap    *inventory.Snapshot
	mu      sync.Mutex
	entries map[string]ranking
}

const maxRankMemo = 1024

// rank scans the inventory for the alternatives, or reuses the result of an
// earlier identical scan of the same snapshot.
func (m *Matcher) rank(snap *inventory.Snapshot, qemu *isa.Request, emu []emuAlt, native []alt) ranking {
	compute := func() ranking {
		matching, ranked := scanGroups(snap, emu, native)
		pref, runs := m.preferredTerms(qemu, emu, native, ranked)
		return ranking{matching: matching, preferred: pref, tiers: tiersString(qemu != nil && len(emu) > 0, pref, runs, native)}
	}
	if m.noMemo {
		return compute()
	}
	memo := m.memo.Load()
	if memo == nil || memo.snap != snap {
		fresh := &rankMemo{snap: snap, entries: map[string]ranking{}}
		if m.memo.CompareAndSwap(memo, fresh) {
			memo = fresh
		} else if memo = m.memo.Load(); memo.snap != snap {
			return compute() // a newer or older snapshot raced us
		}
	}
	var buf [256]byte
	key := rankKey(buf[:0], qemu != nil, emu, native)
	memo.mu.Lock()
	r, ok := memo.entries[string(key)]
	memo.mu.Unlock()
	if ok {
		return r
	}
	r = compute()
	memo.mu.Lock()
	if len(memo.entries) >= maxRankMemo {
		clear(memo.entries)
	}
	memo.entries[string(key)] = r
	memo.mu.Unlock()
	return r
}

func appendISA(b []byte, i isa.ISA, plain bool) []byte {
	b = append(b, i.Arch...)
	if plain {
		return append(b, '!')
	}
	b = append(b, ':')
	for _, w := range i.Exts {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func rankKey(b []byte, qemu bool, emu []emuAlt, native []alt) []byte {
	if qemu {
		b = append(b, 'q')
	}
	for _, e := range emu {
		b = append(b, 'e')
		b = appendISA(b, e.q, false)
		b = appendISA(b, e.native.isa, e.native.plain)
	}
	for _, n := range native {
		b = append(b, 'n')
		b = appendISA(b, n.isa, n.plain)
	}
	return b
}

type scoredGroup struct {
	g     *inventory.Group
	aff   float64
	nodes int // of all groups with g's ID
}

// scanGroups counts the inventory's nodes the required terms admit now and
// returns the groups some native alternative admits, best first:
// highest affinity, then most nodes, then id.
func scanGroups(snap *inventory.Snapshot, emu []emuAlt, native []alt) (matching int, ranked []scoredGroup) {
	plain := plainArches(native)
	for _, a := range plain {
		matching += snap.ArchNodes[a]
	}
	for k := range snap.Groups {
		g := &snap.Groups[k]
		counted := len(plain) > 0 && slices.Contains(plain, string(g.Native.Arch)) // by architecture
		best := 0.0
		for _, n := range native {
			if a := isa.Affinity(g.Native, n.isa); a > best {
				best = a
			}
		}
		if best == 0 {
			if !counted && emuMatches(g, emu) {
				matching += g.Nodes
			}
			continue
		}
		if !counted {
			matching += g.Nodes
		}
		// Groups sharing an ID (same native ISA, different emulation) are
		// adjacent in the snapshot.
		if l := len(ranked); l > 0 && ranked[l-1].g.ID == g.ID {
			ranked[l-1].nodes += g.Nodes
			continue
		}
		if ranked == nil {
			ranked = make([]scoredGroup, 0, len(snap.Groups)-k)
		}
		ranked = append(ranked, scoredGroup{g: g, aff: best, nodes: g.Nodes})
	}
	normalisePerArch(ranked)
	slices.SortFunc(ranked, func(a, b scoredGroup) int {
		if c := cmp.Compare(b.aff, a.aff); c != 0 {
			return c
		}
		if c := cmp.Compare(b.nodes, a.nodes); c != 0 {
			return c
		}
		return strings.Compare(a.g.ID, b.g.ID)
	})
	return matching, ranked
}

const affinityEpsilon = 1e-9

// normalisePerArch divides each group's affinity by the best affinity of its
// architecture. Affinities of different architectures are not comparable (an
// arm64 base ISA has 2 features, x86-64's has 9): a pod that may run on
// several architectures finds its best fit in each of them, and the
// scheduler chooses among those.
func normalisePerArch(ranked []scoredGroup) {
	var arches [8]isa.Arch
	var best [8]float64
	n := 0
	for _, g := range ranked {
		k := slices.Index(arches[:n], g.g.Native.Arch)
		if k < 0 {
			if n == len(arches) {
				return // more architectures than exist; leave as is
			}
			k, n = n, n+1
			arches[k] = g.g.Native.Arch
		}
		best[k] = max(best[k], g.aff)
	}
	if n < 2 {
		return
	}
	for i := range ranked {
		k := slices.Index(arches[:n], ranked[i].g.Native.Arch)
		ranked[i].aff /= best[k]
	}
}

// tierRun is the groups that share one preferred-term weight.
type tierRun struct {
	weight int32
	groups []scoredGroup
}

// tiers assigns weights: affinity tiers in descending order; within a tier
// the largest groups get the tier weight, smaller ones a little less.
func tiers(ranked []scoredGroup, weights, bonus []int32) []tierRun {
	var runs []tierRun
	t, r := 0, int32(0)
	for k, g := range ranked {
		if k > 0 {
			prev := ranked[k-1]
			if g.aff < prev.aff-affinityEpsilon {
				t, r = t+1, 0
			} else if g.nodes < prev.nodes {
				r++
			}
		}
		if t >= len(weights) {
			break
		}
		w := weights[t] - min(r, bonus[t])
		if l := len(runs); l > 0 && runs[l-1].weight == w {
			runs[l-1].groups = append(runs[l-1].groups, g)
			continue
		}
		runs = append(runs, tierRun{weight: w, groups: []scoredGroup{g}})
	}
	return runs
}

// preferredTerms implements the paper's priority order. A plain architecture
// is ranked as its base ISA (rv64i, x86-64, arm64): the leanest node of the
// architecture fits best, which keeps richer nodes free for the tasks that
// need them (the paper's base-ISA tasks, RV64I, score |I| / |node|).
func (m *Matcher) preferredTerms(qemu *isa.Request, emu []emuAlt, native []alt, ranked []scoredGroup) ([]corev1.PreferredSchedulingTerm, []tierRun) {
	var out []corev1.PreferredSchedulingTerm
	if qemu != nil {
		seen := map[string]bool{}
		for _, e := range emu {
			t := corev1.NodeSelectorTerm{MatchExpressions: m.reqs(e.q, true)}
			if k := termKey(t); !seen[k] {
				seen[k] = true
				out = append(out, corev1.PreferredSchedulingTerm{Weight: EmulationWeight, Preference: t})
			}
		}
	}
	if len(native) == 0 {
		return out, nil
	}
	weights, bonus := tierWeights[:], tierBonus[:]
	if qemu != nil {
		weights, bonus = qemuTierWeights[:], qemuTierBonus[:]
	}
	runs := tiers(ranked, weights, bonus)
	for _, run := range runs {
		ids := make([]string, len(run.groups))
		for k, g := range run.groups {
			ids[k] = g.g.ID
		}
		slices.Sort(ids)
		out = append(out, corev1.PreferredSchedulingTerm{Weight: run.weight, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: GroupLabel, Operator: corev1.NodeSelectorOpIn, Values: ids}},
		}})
	}
	return out, runs
}

func briefName(s string) string {
	const max = 48
	if len(s) <= max {
		return s
	}
	if k := strings.LastIndexByte(s[:max], '_'); k > 0 {
		return s[:k] + "_…"
	}
	return s[:max] + "…"
}

func (m *Matcher) altString(a alt) string {
	if a.plain {
		return "arch " + string(a.isa.Arch)
	}
	return m.brief(a.isa)
}

func (m *Matcher) altsString(alts []alt) string {
	var parts []string
	if p := plainArches(alts); len(p) > 0 {
		parts = append(parts, "arch "+strings.Join(p, ","))
	}
	for _, a := range alts {
		if !a.plain {
			parts = append(parts, m.brief(a.isa))
		}
	}
	return strings.Join(parts, " | ")
}

func (m *Matcher) requiredString(emu []emuAlt, native []alt) string {
	var parts []string
	for k := 0; k < len(emu); {
		q := emu[k].q
		var on []alt
		for ; k < len(emu) && emu[k].q.Arch == q.Arch && emu[k].q.Exts == q.Exts; k++ {
			if emu[k].native.isa.Arch != "" {
				on = append(on, emu[k].native)
			}
		}
		s := "emulates " + m.brief(q)
		if len(on) > 0 {
			s += " on " + m.altsString(on)
		}
		parts = append(parts, s)
	}
	if len(native) > 0 {
		parts = append(parts, m.altsString(native))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " | ")
}

// summary is the decision annotation: one readable line.
func (m *Matcher) summary(in Input, tiers string, d Decision) string {
	var b strings.Builder
	b.Grow(256 + len(tiers))
	w := b.WriteString
	w("request=")
	if in.Request != nil {
		w(strconv.Quote(in.RequestText))
		w(" (")
		w(in.RequestFrom)
		w(")")
	} else {
		w("none")
	}
	if in.QEMU != nil {
		w(" qemu=")
		w(strconv.Quote(in.QEMUText))
		w(" (")
		w(in.QEMUFrom)
		w(")")
	}
	w("; images:")
	for _, img := range in.Images {
		w(" ")
		w(img.Ref)
		w(" [")
		if img.Err != nil {
			w("error ")
			w(errorKind(img.Err))
		} else {
			for k, p := range img.Platforms {
				if k > 0 {
					w(" ")
				}
				w(platformString(p))
			}
		}
		w("]")
	}
	if len(in.Images) == 0 {
		w(" none")
	}
	w("; required: ")
	w(d.RequiredText)
	w(" (")
	w(strconv.Itoa(d.MatchingNodes))
	w(" node")
	w(plural(d.MatchingNodes))
	w(" now); tiers:")
	w(tiers)
	if len(d.Warnings) > 0 {
		w("; warnings: ")
		for k, wn := range d.Warnings {
			if k > 0 {
				w(" / ")
			}
			w(wn.Text)
		}
	}
	return b.String()
}

// tiersString describes the preferred terms, one entry per weight: the
// groups' affinity, how many groups and nodes, and what the first groups
// have beyond what the pod needs ("exact fit" when nothing). Group ids are
// in the preferred terms themselves; the annotation stays short because
// every byte of it is stored with the pod.
func tiersString(emulation bool, preferred []corev1.PreferredSchedulingTerm, runs []tierRun, native []alt) string {
	if len(preferred) == 0 {
		return " none (scheduler decides)"
	}
	var b strings.Builder
	w := b.WriteString
	if emulation {
		w(" w" + strconv.Itoa(int(EmulationWeight)) + " emulation")
	}
	const show = 2
	for k, run := range runs {
		if k > 0 || emulation {
			w(",")
		}
		nodes := 0
		for _, g := range run.groups {
			nodes += g.nodes
		}
		w(" w" + strconv.Itoa(int(run.weight)) + " affinity " + strconv.FormatFloat(run.groups[0].aff, 'f', 2, 64) + ": ")
		w(strconv.Itoa(len(run.groups)) + " group" + plural(len(run.groups)) + ", " + strconv.Itoa(nodes) + " node" + plural(nodes) + " (")
		for i, g := range run.groups[:min(len(run.groups), show)] {
			if i > 0 {
				w(" | ")
			}
			w(extra(g.g.Native, native))
		}
		if len(run.groups) > show {
			w(" | …")
		}
		w(")")
	}
	return b.String()
}

// extra is what node has beyond the alternative it fits most closely
// (isa.Beyond), as "+zicond_zicbom" cut at an extension boundary, or
// "exact fit".
func extra(node isa.ISA, native []alt) string {
	var best []string
	found := false
	for _, n := range native {
		if !isa.Satisfies(node, n.isa) {
			continue
		}
		if e := isa.Beyond(node, n.isa); !found || len(e) < len(best) {
			best, found = e, true
		}
	}
	if len(best) == 0 {
		return "exact fit"
	}
	const max = 32
	s := "+" + best[0]
	for _, e := range best[1:] {
		if len(s)+1+len(e) > max {
			return s + "_…"
		}
		s += "_" + e
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
