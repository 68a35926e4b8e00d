package labeler

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// EventRecorder records Events (events.k8s.io/v1); controller-runtime's
// manager.GetEventRecorder returns one.
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Reasons of the labeler's Events on its Node.
const (
	ReasonLabelsChanged = "LabelsChanged"
	ReasonProbeFailed   = "ProbeFailed"
	// ReasonEmulationUnavailable: the host has QEMU binfmt_misc handlers
	// that give no emulation labels, and why.
	ReasonEmulationUnavailable = "EmulationUnavailable"
)

// maxNote is the most an Event's note may hold (events.k8s.io/v1: 1 kB).
const maxNote = 1024

// changeNote says what a reconcile changed on the node and why: the label
// keys added (with values), changed and removed, then the probe's account
// of the native and emulated ISAs. It fits in maxNote bytes: a long list of
// keys is cut, the account of why never entirely.
func changeNote(out Result, nativeSource, emuSource string) string {
	var parts []string
	labels := map[string]string{}
	if out.Node != nil {
		labels = out.Node.Labels
	}
	withValues := func(keys []string) string {
		kv := make([]string, len(keys))
		for i, k := range keys {
			kv[i] = k + "=" + labels[k]
		}
		return strings.Join(kv, ", ")
	}
	if len(out.Added) > 0 {
		parts = append(parts, "added "+withValues(out.Added))
	}
	if len(out.Changed) > 0 {
		parts = append(parts, "changed "+withValues(out.Changed))
	}
	if len(out.Removed) > 0 {
		parts = append(parts, "removed "+strings.Join(out.Removed, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "labels unchanged")
	}
	if ann := out.Set + out.Deleted - len(out.Added) - len(out.Changed) - len(out.Removed); ann > 0 {
		parts = append(parts, fmt.Sprintf("%d annotations updated", ann))
	}
	// The why is kept whatever the number of keys: the what gets the room
	// the why leaves.
	why := "source: " + nativeSource
	if emuSource != "" {
		why += "; emulation: " + emuSource
	}
	why = truncate(why, maxNote/2)
	return truncate(strings.Join(parts, "; "), maxNote-len(why)-2) + "; " + why
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " ..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// nodeRef is the object a probe failure is recorded on when the node was
// not read: UID is the node's name, as the kubelet's own node Events have
// it, so kubectl describe node lists them.
func nodeRef(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}
}
