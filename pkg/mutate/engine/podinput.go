package engine

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KeyOptions chooses the pod keys a request is read from.
type KeyOptions struct {
	// IgnoreBareKeys reads only isamatch's own keys
	// (isa.isamatch.io/request and isa.isamatch.io/qemu), not the
	// paper's bare ones (annotations isa.request and isa.qemu, labels ARCH
	// and QEMU), for clusters where those collide with existing
	// manifests.
	IgnoreBareKeys bool
}

// PodInput reads a pod's requests from its annotations and labels as the
// webhook does with its default keys (which key wins, how each is
// parsed), for tools that explain a decision after the fact. Images are
// left empty. msg, when not empty, is the denial a malformed request gets.
func PodInput(meta metav1.ObjectMeta) (in Input, msg string) {
	return PodInputWith(meta, KeyOptions{})
}

// PodInputWith is PodInput reading the keys o chooses.
func PodInputWith(meta metav1.ObjectMeta, o KeyOptions) (in Input, msg string) {
	in, _, msg = ReadRequests(meta.Annotations, meta.Labels, o)
	return in, msg
}
