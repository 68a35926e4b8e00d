package engine

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

func platformString(p Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

func platformsString(ps []Platform) string {
	if len(ps) == 0 {
		return "none"
	}
	parts := make([]string, len(ps))
	for k, p := range ps {
		parts[k] = platformString(p)
	}
	return strings.Join(parts, " ")
}

// platformNeed says what platform k of img needs beyond its architecture
// and variant, and where that came from: " needs rv64imfd (ELF of
// /usr/bin/app)" or " needs \"rv64gcv\" (image label)"; "" when nothing
// (a pod that asks itself ignores both).
func platformNeed(img ImageInfo, k int, podAsks bool) string {
	if podAsks {
		return ""
	}
	if in := inferredAt(img, k); in != nil {
		return " needs " + brief(in.ISA) + " (" + in.Source + ")"
	}
	if l := img.Platforms[k].ISARequest; l != "" {
		return " needs " + strconv.Quote(briefName(l)) + " (image label)"
	}
	return ""
}

// brief is an ISA for messages: its compact form (isa.ISA.Compact), cut at
// an extension boundary when long.
func brief(i isa.ISA) string {
	return briefName(i.Compact())
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
		exec := false
		for ; k < len(emu) && emu[k].q.Arch == q.Arch && emu[k].q.Exts == q.Exts; k++ {
			if emu[k].native.isa.Arch != "" {
				on = append(on, emu[k].native)
			}
			exec = exec || emu[k].exec
		}
		s := "emulates " + brief(q)
		switch {
		case len(on) > 0 && exec:
			s += " on " + altsString(on) + " or executes its images under QEMU"
		case len(on) > 0:
			s += " on " + altsString(on)
		case exec:
			s = "executes " + brief(q) + " images under QEMU"
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
func summary(in Input, tiers string, d Decision) string {
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
	podAsks := in.Request != nil || in.QEMU != nil
	w("; images:")
	for _, img := range in.Images {
		w(" ")
		w(img.Ref)
		w(" [")
		if img.Err != nil {
			w("error ")
			w(ErrorKind(img.Err))
		} else {
			for k, p := range img.Platforms {
				if k > 0 {
					w(" ")
				}
				w(platformString(p))
				w(platformNeed(img, k, podAsks))
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
