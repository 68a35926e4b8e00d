package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/isa"
)

// ReplayPath answers each pod with a patch recorded beforehand (see
// replayer): the floor of a webhook that writes what isamatch writes but
// decides nothing.
const ReplayPath = "/replay-v1-pod"

// maxReplayFile bounds the patches file: a few KB per request kind.
const maxReplayFile = 1 << 20

// replayer answers a pod with the JSON patch recorded for the value of its
// isa.request annotation ("" for none), already encoded, and allows a pod
// whose value has none unchanged. It decodes the pod's annotations only.
type replayer struct {
	patches map[string][]byte
}

// loadReplayer reads a JSON object of isa.request values to JSON patches.
func loadReplayer(path string) (*replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the replay patches: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxReplayFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(raw) > maxReplayFile {
		return nil, fmt.Errorf("%s is over %d bytes: it should hold a few patches", path, maxReplayFile)
	}
	var in map[string][]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of isa.request values to JSON patches (arrays of operations): %w", path, err)
	}
	r := &replayer{patches: make(map[string][]byte, len(in))}
	for k, ops := range in {
		if len(ops) == 0 {
			continue
		}
		if r.patches[k], err = json.Marshal(ops); err != nil {
			return nil, fmt.Errorf("%s: patch of %q: %w", path, k, err)
		}
	}
	return r, nil
}

// Handle answers req with its recorded patch.
func (r *replayer) Handle(_ context.Context, req admission.Request) admission.Response {
	ann, err := podAnnotations(req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	p, ok := r.patches[ann[isa.BareRequestAnnotation]]
	if !ok {
		return admission.Allowed("")
	}
	return patched(p)
}

// podAnnotations decodes only the annotations of req's pod: the paths
// that answer with a prepared patch read nothing else.
func podAnnotations(req admission.Request) (map[string]string, error) {
	var pod struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, fmt.Errorf("decode the pod: %w", err)
	}
	return pod.Metadata.Annotations, nil
}

// patched allows the pod with patch, an encoded JSON patch.
func patched(patch []byte) admission.Response {
	resp := admission.Allowed("")
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	return resp
}
