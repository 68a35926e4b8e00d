package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// AnnotatePath answers every pod with the least any mutation writes: one
// annotation added (see annotator). Against MutatePath it is the cost of a
// patch at all; against ReplayPath, what isamatch's patch costs beyond it.
const AnnotatePath = "/annotate-v1-pod"

// The annotation AnnotatePath adds.
const (
	annotationKey   = "bench.isamatch.io/m"
	annotationValue = "1"
)

// annotator adds annotationKey to every pod. Its two patches are encoded
// once: the one for a pod with annotations adds the key to them, the one
// for a pod without adds the whole map (a JSON patch cannot add into a
// member that does not exist). It decodes the pod's annotations only, so
// it does no more than any mutation must; admission.PatchResponseFromRaw
// would decode, re-encode and diff the whole pod, which is part of what
// the bench measures isamatch against.
type annotator struct {
	intoMap, newMap []byte
}

var _ admission.Handler = (*annotator)(nil)

func newAnnotator() (*annotator, error) {
	into, err := json.Marshal([]jsonpatch.Operation{
		jsonpatch.NewOperation("add", "/metadata/annotations/"+escapePointer(annotationKey), annotationValue),
	})
	if err != nil {
		return nil, fmt.Errorf("encode the annotation patch: %w", err)
	}
	whole, err := json.Marshal([]jsonpatch.Operation{
		jsonpatch.NewOperation("add", "/metadata/annotations", map[string]string{annotationKey: annotationValue}),
	})
	if err != nil {
		return nil, fmt.Errorf("encode the annotations patch: %w", err)
	}
	return &annotator{intoMap: into, newMap: whole}, nil
}

// Handle answers req with the patch for its pod's shape.
func (a *annotator) Handle(_ context.Context, req admission.Request) admission.Response {
	ann, err := podAnnotations(req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if ann == nil {
		return patched(a.newMap)
	}
	return patched(a.intoMap)
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
