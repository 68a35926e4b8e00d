package mutate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// matcher holds what decisions need that never changes.
type matcher struct {
	baseline map[isa.Arch]isa.ExtSet // FromPlatform(linux, arch, "")
}

func newMatcher() *matcher {
	m := &matcher{baseline: map[isa.Arch]isa.ExtSet{}}
	for _, a := range []isa.Arch{isa.AMD64, isa.ARM64, isa.RISCV64, isa.RISCV32} {
		if i, err := isa.FromPlatform("linux", string(a), ""); err == nil {
			m.baseline[a] = i.Exts
		}
	}
	return m
}

// imageAlts turns an image's platforms into alternatives; unsupported lists
// the platforms isamatch has no model for.
func (m *matcher) imageAlts(img ImageInfo, useLabel bool) (alts []alt, unsupported []string, labelErr error) {
	for _, p := range img.Platforms {
		i, err := isa.FromPlatform(p.OS, p.Architecture, p.Variant)
		if err != nil {
			unsupported = append(unsupported, platformString(p))
			continue
		}
		a := alt{isa: i}
		if base, ok := m.baseline[i.Arch]; ok && base == i.Exts {
			a = alt{isa: isa.ISA{Arch: i.Arch}, plain: true}
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

// wider reports whether every node a admits... the other way round: whether
// a admits every node b admits (so b is redundant next to a).
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

// decide turns the inputs into a decision against the inventory snapshot.
func (m *matcher) decide(in Input, snap *inventory.Snapshot) Decision {
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
					img.Ref, platformsString(img.Platforms), altsString(combo))
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

	d.Required = requiredTerms(emu, native)
	d.MatchingNodes = matchingNodes(snap, emu, native)
	var runs []tierRun
	d.Preferred, runs = preferredTerms(in.QEMU, emu, native, snap)
	if len(d.Required) > 0 && d.MatchingNodes == 0 {
		d.Warnings = append(d.Warnings, Warning{"noNode",
			fmt.Sprintf("no node satisfies %s now; the pod stays Pending until such a node joins", requiredString(emu, native))})
	}
	d.Summary = summary(in, emu, native, runs, d)
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
func requiredTerms(emu []emuAlt, native []alt) []corev1.NodeSelectorTerm {
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
				add(corev1.NodeSelectorTerm{MatchExpressions: nodeReqs(isa.Requirements(q, true))})
			case n.plain:
				if !slices.Contains(plain, string(n.isa.Arch)) {
					plain = append(plain, string(n.isa.Arch))
				}
			default:
				add(corev1.NodeSelectorTerm{MatchExpressions: append(nodeReqs(isa.Requirements(q, true)), nodeReqs(isa.Requirements(n.isa, false))...)})
			}
		}
		if len(plain) > 0 {
			slices.Sort(plain)
			add(corev1.NodeSelectorTerm{MatchExpressions: append(nodeReqs(isa.Requirements(q, true)), archIn(plain))})
		}
	}
	if p := plainArches(native); len(p) > 0 {
		add(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{archIn(p)}})
	}
	for _, n := range native {
		if !n.plain {
			add(corev1.NodeSelectorTerm{MatchExpressions: nodeReqs(isa.Requirements(n.isa, false))})
		}
	}
	return terms
}

func groupMatches(g *inventory.Group, emu []emuAlt, native []alt) bool {
	for _, n := range native {
		if !n.plain && isa.Satisfies(g.Native, n.isa) {
			return true
		}
	}
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

// matchingNodes counts the inventory's nodes the required terms admit now.
func matchingNodes(snap *inventory.Snapshot, emu []emuAlt, native []alt) int {
	plain := plainArches(native)
	n := 0
	for _, a := range plain {
		n += snap.ArchNodes[a]
	}
	for k := range snap.Groups {
		g := &snap.Groups[k]
		if slices.Contains(plain, string(g.Native.Arch)) {
			continue // counted by architecture
		}
		if groupMatches(g, emu, native) {
			n += g.Nodes
		}
	}
	return n
}

type scoredGroup struct {
	id    string
	isa   isa.ISA
	aff   float64
	nodes int
}

// rankGroups returns the groups some non-plain native alternative admits,
// best first: highest affinity, then most nodes, then id.
func rankGroups(snap *inventory.Snapshot, native []alt) []scoredGroup {
	var out []scoredGroup
	for k := range snap.Groups {
		g := &snap.Groups[k]
		best := 0.0
		for _, n := range native {
			if a := isa.Affinity(g.Native, n.isa); a > best {
				best = a
			}
		}
		if best == 0 {
			continue
		}
		// Groups sharing an ID (same native ISA, different emulation) are
		// adjacent in the snapshot.
		if l := len(out); l > 0 && out[l-1].id == g.ID {
			out[l-1].nodes += g.Nodes
			continue
		}
		out = append(out, scoredGroup{id: g.ID, isa: g.Native, aff: best, nodes: g.Nodes})
	}
	slices.SortFunc(out, func(a, b scoredGroup) int {
		if c := cmp.Compare(b.aff, a.aff); c != 0 {
			return c
		}
		if c := cmp.Compare(b.nodes, a.nodes); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

const affinityEpsilon = 1e-9

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

// preferredTerms implements the paper's priority order. Tiers are emitted
// only when every native alternative names an ISA (a request or a platform
// variant); a plain architecture leaves ranking to the scheduler, as in the
// paper ("with neither request, the default scheduler decides").
func preferredTerms(qemu *isa.Request, emu []emuAlt, native []alt, snap *inventory.Snapshot) ([]corev1.PreferredSchedulingTerm, []tierRun) {
	var out []corev1.PreferredSchedulingTerm
	if qemu != nil {
		seen := map[string]bool{}
		for _, e := range emu {
			t := corev1.NodeSelectorTerm{MatchExpressions: nodeReqs(isa.Requirements(e.q, true))}
			if k := termKey(t); !seen[k] {
				seen[k] = true
				out = append(out, corev1.PreferredSchedulingTerm{Weight: EmulationWeight, Preference: t})
			}
		}
	}
	if len(native) == 0 || len(plainArches(native)) > 0 {
		return out, nil
	}
	weights, bonus := tierWeights[:], tierBonus[:]
	if qemu != nil {
		weights, bonus = qemuTierWeights[:], qemuTierBonus[:]
	}
	runs := tiers(rankGroups(snap, native), weights, bonus)
	for _, run := range runs {
		ids := make([]string, len(run.groups))
		for k, g := range run.groups {
			ids[k] = g.id
		}
		slices.Sort(ids)
		out = append(out, corev1.PreferredSchedulingTerm{Weight: run.weight, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: GroupLabel, Operator: corev1.NodeSelectorOpIn, Values: ids}},
		}})
	}
	return out, runs
}

// brief is an ISA for messages: the unversioned form, cut at an extension
// boundary when long.
func brief(i isa.ISA) string {
	const max = 48
	s := i.Short()
	if len(s) <= max {
		return s
	}
	if k := strings.LastIndexByte(s[:max], '_'); k > 0 {
		return s[:k] + "_…"
	}
	return s[:max] + "…"
}

func altString(a alt) string {
	if a.plain {
		return "arch " + string(a.isa.Arch)
	}
	return brief(a.isa)
}

func altsString(alts []alt) string {
	var parts []string
	if p := plainArches(alts); len(p) > 0 {
		parts = append(parts, "arch "+strings.Join(p, ","))
	}
	for _, a := range alts {
		if !a.plain {
			parts = append(parts, brief(a.isa))
		}
	}
	return strings.Join(parts, " | ")
}

func requiredString(emu []emuAlt, native []alt) string {
	var parts []string
	for k := 0; k < len(emu); {
		q := emu[k].q
		var on []alt
		for ; k < len(emu) && emu[k].q.Arch == q.Arch && emu[k].q.Exts == q.Exts; k++ {
			if emu[k].native.isa.Arch != "" {
				on = append(on, emu[k].native)
			}
		}
		s := "emulates " + brief(q)
		if len(on) > 0 {
			s += " on " + altsString(on)
		}
		parts = append(parts, s)
	}
	if len(native) > 0 {
		parts = append(parts, altsString(native))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " | ")
}

// summary is the decision annotation: one readable line.
func summary(in Input, emu []emuAlt, native []alt, runs []tierRun, d Decision) string {
	var b strings.Builder
	b.WriteString("request=")
	if in.Request != nil {
		fmt.Fprintf(&b, "%q (%s)", in.RequestText, in.RequestFrom)
	} else {
		b.WriteString("none")
	}
	if in.QEMU != nil {
		fmt.Fprintf(&b, " qemu=%q (%s)", in.QEMUText, in.QEMUFrom)
	}
	b.WriteString("; images:")
	for _, img := range in.Images {
		b.WriteString(" ")
		b.WriteString(img.Ref)
		if img.Err != nil {
			fmt.Fprintf(&b, " [error %s]", errorKind(img.Err))
		} else {
			fmt.Fprintf(&b, " [%s]", platformsString(img.Platforms))
		}
	}
	if len(in.Images) == 0 {
		b.WriteString(" none")
	}
	fmt.Fprintf(&b, "; required: %s (%d node%s now)", requiredString(emu, native), d.MatchingNodes, plural(d.MatchingNodes))
	b.WriteString("; tiers:")
	if len(d.Preferred) == 0 {
		b.WriteString(" none (scheduler decides)")
	}
	if in.QEMU != nil && len(emu) > 0 {
		fmt.Fprintf(&b, " w%d emulation", EmulationWeight)
	}
	const show = 3
	for k, run := range runs {
		if k > 0 || in.QEMU != nil {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " w%d", run.weight)
		for i, g := range run.groups[:min(len(run.groups), show)] {
			if i > 0 {
				b.WriteString(" +")
			}
			fmt.Fprintf(&b, " %s (group %s, %d node%s, affinity %.2f)", brief(g.isa), g.id, g.nodes, plural(g.nodes), g.aff)
		}
		if len(run.groups) > show {
			fmt.Fprintf(&b, " + %d more groups", len(run.groups)-show)
		}
	}
	if len(d.Warnings) > 0 {
		b.WriteString("; warnings: ")
		for k, w := range d.Warnings {
			if k > 0 {
				b.WriteString(" / ")
			}
			b.WriteString(w.Text)
		}
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
