package mutate

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PodInput reads a pod's requests from its annotations and labels as the
// webhook does (which key wins, how each is parsed), for tools that explain
// a decision after the fact. Images are left empty. msg, when not empty, is
// the denial a malformed request gets.
func PodInput(meta metav1.ObjectMeta) (in Input, msg string) {
	in, _, msg = podInput(&podFields{ObjectMeta: meta})
	return in, msg
}
