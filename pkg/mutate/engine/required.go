package engine

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// DefaultMaxRequiredTerms is the default cap on the terms of a pod's
// required node affinity once its own terms and isamatch's are combined:
// the cross product grows fast, and the scheduler evaluates every term.
const DefaultMaxRequiredTerms = 64

// RequiredAffinity is the required node affinity the webhook writes on a
// pod that asks for req, in annotation isa.request or, when emulated, in
// isa.qemu (whose required terms are "emulates req" OR "runs req
// natively"), and that names no image and no node affinity of its own. It
// is what isactl affinity prints.
func RequiredAffinity(req isa.Request, emulated bool) (*corev1.NodeSelector, error) {
	in := Input{Request: &req}
	if emulated {
		in = Input{QEMU: &req}
	}
	d := NewMatcher().Decide(in, &Snapshot{})
	if d.Denied != "" {
		return nil, errors.New(d.Denied)
	}
	return MergeRequired(nil, d.Required, DefaultMaxRequiredTerms)
}
