package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

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
	// Counts are the decision's numbers, for programs.
	Counts contract.DecisionCounts
	// Spread is what the pod's replicas spread over (see spread.go).
	Spread Spread
	// RequiredText describes Required for messages.
	RequiredText string
	// Summary is the readable one-line record for the decision annotation.
	Summary string
	// Emulator is the QEMU_CPU setting of a pod with isa.qemu (emulator.go).
	Emulator *contract.EmulatorSetting
}

// Matcher is the decision logic without Kubernetes I/O: pod inputs and an
// inventory snapshot in, affinity out. It remembers the ranking of recent
// sets of alternatives per inventory snapshot (see rank). It is safe for
// concurrent use.
type Matcher struct {
	baseline map[isa.Arch]isa.ExtSet // FromPlatform(linux, arch, "")
	// base is each architecture's base ISA (rv64i, x86-64, arm64): what a
	// plain-architecture alternative is ranked with.
	base map[isa.Arch]isa.ISA

	memo atomic.Pointer[rankMemo]
}

// NewMatcher returns a Matcher with an empty ranking memo.
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

// maxCombined bounds the alternatives one AND of two OR-lists may produce
// before they are minimised (minimize is quadratic). With it, every step of
// Decide is bounded by a small constant: at most maxCombined² subset tests
// per image (about 65k, well under a millisecond), so Decide needs no
// deadline of its own. Real pods stay far below it: a request has at most
// MaxAlternatives alternatives and an index a handful of platforms.
const maxCombined = 256

func tooManyCombined() string {
	return fmt.Sprintf("the pod's request and images combine into more than %d ISA alternatives; the limit is %d: request fewer alternatives or use images with fewer platforms", maxCombined, maxCombined)
}

// Decide turns the inputs into a decision against the inventory snapshot.
func (m *Matcher) Decide(in Input, snap *Snapshot) Decision {
	var d Decision
	podAsks := in.Request != nil || in.QEMU != nil

	// Images: the node needs ANY platform of each image, ALL images.
	type constrained struct {
		img  ImageInfo
		alts []alt
	}
	var imgs []constrained
	var combo []alt
	var unresolved []contract.UnresolvedImage
	unknown := 0
	for _, img := range in.Images {
		if img.Err != nil {
			unknown++
			if len(unresolved) < contract.MaxUnresolvedListed {
				unresolved = append(unresolved, unresolvedImage(img))
			}
			d.Warnings = append(d.Warnings, Warning{"imageError",
				fmt.Sprintf("image %q: platforms unknown (%s), placed without its constraint", img.Ref, errorText(img.Err))})
			continue
		}
		for _, p := range img.Platforms {
			if p.LabelIgnored > 0 {
				d.Warnings = append(d.Warnings, Warning{ReasonLabelTooLarge,
					fmt.Sprintf("image %q: label %s ignored: it is %d bytes; the limit is %d bytes", img.Ref, isa.ImageRequestLabel, p.LabelIgnored, p.LabelLimit)})
				break
			}
			if p.ConfigIgnored > 0 {
				d.Warnings = append(d.Warnings, Warning{ReasonLabelTooLarge,
					fmt.Sprintf("image %q: config of %s not read: it is %d bytes; the limit is %d bytes; its label %s, if any, is ignored", img.Ref, p.Architecture, p.ConfigIgnored, p.ConfigLimit, isa.ImageRequestLabel)})
				break
			}
		}
		alts, unsupported, labelErr, inferred := m.imageAlts(img, !podAsks)
		d.Counts.Inferred += inferred
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
			if len(alts) > maxCombined {
				d.Denied = tooManyCombined()
				return d
			}
			combo = alts
		} else {
			if len(combo)*len(alts) > maxCombined {
				d.Denied = tooManyCombined()
				return d
			}
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
	fellBack := false
	if in.Fallback != "" && unknown > 0 && !podAsks {
		next, ok, w := m.fallback(in.Fallback, unknown, combo, len(imgs) > 0)
		d.Warnings = append(d.Warnings, w)
		if ok {
			combo, fellBack = next, true
			d.Counts.Fallback = string(in.Fallback)
		}
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
			if len(native)*len(combo) > maxCombined {
				d.Denied = tooManyCombined()
				return d
			}
			native = combine(native, combo)
		}
	case len(imgs) > 0 || fellBack:
		native = combo
	}
	if nativeReq != nil && len(native) == 0 && in.QEMU == nil {
		cur := requestAlts(nativeReq)
		for _, c := range imgs {
			if len(cur)*len(c.alts) > maxCombined {
				d.Denied = tooManyCombined()
				return d
			}
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
		if len(in.QEMU.Alternatives)*max(len(combo), 1) > maxCombined {
			d.Denied = tooManyCombined()
			return d
		}
		for _, q := range requestAlts(in.QEMU) {
			if len(imgs) == 0 {
				emu = append(emu, emuAlt{q: q.isa})
				continue
			}
			for _, n := range combo {
				emu = append(emu, emulatedAlt(q.isa, n))
			}
		}
	}

	d.Required = requiredTerms(emu, native)
	r := m.rank(snap, in.QEMU, emu, native, in.Own)
	d.MatchingNodes, d.Preferred, d.Spread = r.matching, r.preferred, r.spread
	d.Counts = contract.DecisionCounts{RequiredNodes: r.matching, Tiers: r.counts, Unresolved: unresolved, Inferred: d.Counts.Inferred, Fallback: d.Counts.Fallback}
	d.RequiredText = requiredString(emu, native)
	if len(d.Required) > 0 && d.MatchingNodes == 0 {
		d.Counts.NoNode = true
		d.Warnings = append(d.Warnings, Warning{"noNode",
			"no node satisfies " + d.RequiredText + " now; the pod stays Pending until such a node joins"})
	}
	d.Summary = summary(in, r.tiers, d)
	return d
}

// ReasonLabelTooLarge is the warning reason of an image label or config
// the resolver ignored for its size (Platform.LabelIgnored and
// ConfigIgnored); the same value as registry.KindLabelTooLarge.
const ReasonLabelTooLarge = "labelTooLarge"

// ErrBudget marks an image whose lookup did not finish in the time the
// caller gave it (the admission budget, a gated pod's release from the
// cache): its kind is "timeout".
var ErrBudget = errors.New("registry lookup exceeded the admission time budget")

// kindError is an image error that names its kind (registry.Error): the
// kind is the metric label and, with the cause, the warning text.
type kindError interface {
	error
	ErrorKind() string
	Unwrap() error
}

// errorText is err for a warning: "kind: cause" when it names its kind,
// at most 160 bytes.
func errorText(err error) string {
	var ke kindError
	s := err.Error()
	if errors.As(err, &ke) {
		s = ke.ErrorKind() + ": " + ke.Unwrap().Error()
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// ErrorKind classifies an image's resolution error for the decision
// record and the metric: the kind the error names ("unauthorized",
// "notFound", ...), "timeout" for ErrBudget, else "other".
func ErrorKind(err error) string {
	var ke kindError
	if errors.As(err, &ke) {
		return ke.ErrorKind()
	}
	if errors.Is(err, ErrBudget) {
		return "timeout"
	}
	return "other"
}
