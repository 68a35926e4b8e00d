package testnodes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Labels is what the labeler and kubelet put on a node.
func Labels(t testing.TB, arch, native string, emulated ...string) map[string]string {
	t.Helper()
	l := map[string]string{isa.KubeArchLabel: arch}
	if native == "" {
		return l
	}
	emu := make([]isa.ISA, 0, len(emulated))
	for _, e := range emulated {
		emu = append(emu, MustISA(t, e))
	}
	for k, v := range isa.NodeLabels(MustISA(t, native), emu) {
		l[k] = v
	}
	return l
}

// QEMULabels is Labels of a node that executes each emulated ISA's
// programs through a QEMU handler (not a cross compiler alone).
func QEMULabels(t testing.TB, arch, native string, emulated ...string) map[string]string {
	t.Helper()
	l := Labels(t, arch, native, emulated...)
	for _, e := range emulated {
		l[isa.EmuExecLabel(MustISA(t, e).Arch)] = "true"
	}
	return l
}

// MustISA parses s or fails the test.
func MustISA(t testing.TB, s string) isa.ISA {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return i
}

// Paper is the paper's Table 1, plus an unlabelled riscv64 node and
// a second IMFD node, so group sizes differ.
func Paper(t testing.TB) map[string]map[string]string {
	t.Helper()
	return map[string]map[string]string{
		"node1": Labels(t, "amd64", "x86-64-v3", "rv64imfdv"),
		"node2": Labels(t, "arm64", "arm64"),
		"node3": Labels(t, "riscv64", "rv64imfd"),
		"node4": Labels(t, "riscv64", "rv64imafdcv"),
		"node5": Labels(t, "riscv64", "rv64imfdv"),
		"node6": Labels(t, "riscv64", "rv64imfdv"),
		"node7": Labels(t, "riscv64", ""),
	}
}

// The node-affinity semantics of the scheduler, written out for tests.

// MatchReq reports whether a node with labels meets r.
func MatchReq(r corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		n, err1 := strconv.ParseInt(v, 10, 64)
		w, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return n > w
		}
		return n < w
	}
	return false
}

// MatchTerm reports whether node name with labels meets every
// requirement of t (a term with none matches no node).
func MatchTerm(t corev1.NodeSelectorTerm, name string, labels map[string]string) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for _, r := range t.MatchExpressions {
		if !MatchReq(r, labels) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !MatchReq(corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}, map[string]string{"metadata.name": name}) {
			return false
		}
	}
	return true
}

// Admits reports whether the pod's nodeSelector and required node affinity
// admit the node.
func Admits(pod *corev1.Pod, name string, labels map[string]string) bool {
	for k, v := range pod.Spec.NodeSelector {
		if l, ok := labels[k]; !ok || l != v {
			return false
		}
	}
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil || pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if MatchTerm(t, name, labels) {
			return true
		}
	}
	return false
}

// Score is the NodeAffinity plugin's raw score: the sum of the weights of
// the preferred terms the node matches.
func Score(pod *corev1.Pod, name string, labels map[string]string) int32 {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		return 0
	}
	var s int32
	for _, p := range pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if MatchTerm(p.Preference, name, labels) {
			s += p.Weight
		}
	}
	return s
}

// Placement lists, for the nodes the pod's required affinity admits, the
// raw preferred score.
func Placement(pod *corev1.Pod, nodes map[string]map[string]string) map[string]int32 {
	out := map[string]int32{}
	for name, l := range nodes {
		if Admits(pod, name, l) {
			out[name] = Score(pod, name, l)
		}
	}
	return out
}

// Bench is 5,000 nodes in 200 ISA groups: RISC-V rv64gc plus every
// subset of eight optional extensions (the first 200 of them), 25 nodes
// each, so a request for rv64gc_zba_zbb is satisfied by a quarter of the
// groups at many different affinities.
func Bench(b testing.TB) map[string]map[string]string {
	b.Helper()
	opt := []string{"zba", "zbb", "zbs", "zicond", "zfa", "zbc", "zicbom", "v"}
	nodes := map[string]map[string]string{}
	seen := map[string]bool{}
	for mask := 0; len(seen) < 200; mask++ {
		s := "rv64gc"
		var multi []string
		for k, e := range opt {
			if mask&(1<<k) != 0 {
				if len(e) == 1 {
					s += e
				} else {
					multi = append(multi, e)
				}
			}
		}
		if len(multi) > 0 {
			s += "_" + strings.Join(multi, "_")
		}
		id := isa.GroupID(MustISA(b, s))
		if seen[id] {
			b.Fatalf("%s: duplicate group", s)
		}
		seen[id] = true
		for n := range 25 {
			nodes[fmt.Sprintf("%s-%d", s, n)] = Labels(b, "riscv64", s)
		}
	}
	return nodes
}
