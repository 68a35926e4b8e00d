package mutate

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// maxPatchMemo bounds the patch memo. Pods of one workload (a Deployment's
// replicas, a Job's completions) share one entry.
const maxPatchMemo = 128

// patchMemo remembers admission.PatchResponseFromRaw's answer for a
// projection pair (patchedFields before and after the decision). Replicas
// of one template carry the same affinity and get the same decision, so
// their patch is computed once; diffing the two projections is most of an
// admission's CPU and garbage. Entries hold the bytes they were computed
// from and a hit compares them, so a hash collision is only a miss.
type patchMemo struct {
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[uint64]*patchEntry
}

type patchEntry struct {
	before, after []byte
	resp          admission.Response
	// encoded is resp.Patches as Response.Complete would encode them,
	// filled at the first hit; guarded by patchMemo.mu.
	encoded []byte
}

func newPatchMemo() *patchMemo {
	return &patchMemo{seed: maphash.MakeSeed(), entries: map[uint64]*patchEntry{}}
}

// response returns the patch response from before to after, computing it
// with admission.PatchResponseFromRaw unless this pair was seen recently.
// A computed response carries its operations in Patches, as
// PatchResponseFromRaw returns them; a remembered one carries them already
// encoded in Patch (PatchType set), so replicas share one encoding and
// Response.Complete has nothing left to do. Either way the response is
// shared: callers may add warnings (a fresh slice) but must not change the
// operations or the bytes.
func (m *patchMemo) response(before, after []byte) admission.Response {
	var h maphash.Hash
	h.SetSeed(m.seed)
	_, _ = h.Write(before)
	_ = h.WriteByte(0)
	_, _ = h.Write(after)
	key := h.Sum64()

	m.mu.Lock()
	e, ok := m.entries[key]
	var encoded []byte
	if ok {
		encoded = e.encoded
	}
	m.mu.Unlock()
	if ok && bytes.Equal(e.before, before) && bytes.Equal(e.after, after) {
		if len(e.resp.Patches) == 0 {
			return e.resp
		}
		if encoded == nil {
			var err error
			if encoded, err = json.Marshal(e.resp.Patches); err != nil {
				// Response.Complete will report it.
				return e.resp
			}
			m.mu.Lock()
			e.encoded = encoded
			m.mu.Unlock()
		}
		resp := e.resp
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patches, resp.Patch, resp.PatchType = nil, encoded, &pt
		return resp
	}
	resp := admission.PatchResponseFromRaw(before, after)
	if resp.Result != nil {
		// An error response is not remembered.
		return resp
	}
	m.mu.Lock()
	if len(m.entries) >= maxPatchMemo {
		// Evict one entry; map iteration starts at a random one.
		for k := range m.entries {
			delete(m.entries, k)
			break
		}
	}
	m.entries[key] = &patchEntry{before: before, after: after, resp: resp}
	m.mu.Unlock()
	return resp
}
