package mutate

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestPatchMemo(t *testing.T) {
	a0, a1 := []byte(`{"metadata":{}}`), []byte(`{"metadata":{"annotations":{"a":"1"}}}`)
	b0, b1 := []byte(`{"spec":{}}`), []byte(`{"spec":{"affinity":{}}}`)
	m := newPatchMemo()

	first := m.response(a0, a1)
	want := admission.PatchResponseFromRaw(a0, a1)
	if diff := cmp.Diff(want.Patches, first.Patches); diff != "" {
		t.Fatalf("first answer differs from PatchResponseFromRaw (-want +got):\n%s", diff)
	}
	again := m.response(a0, a1)
	if &again.Patches[0] != &first.Patches[0] {
		t.Errorf("the same pair was diffed again instead of answered from the memo")
	}
	// Warnings added by a caller stay with that caller's copy.
	_ = again.WithWarnings("only for this pod")
	if w := m.response(a0, a1).Warnings; len(w) != 0 {
		t.Errorf("warnings leaked into the memo: %q", w)
	}

	other := m.response(b0, b1)
	if diff := cmp.Diff(admission.PatchResponseFromRaw(b0, b1).Patches, other.Patches); diff != "" {
		t.Errorf("a second pair got a wrong patch (-want +got):\n%s", diff)
	}

	// A hash collision: the entry under (a0, a1)'s key holds another
	// pair's bytes and answer. It must not be returned for (a0, a1).
	for k, e := range m.entries {
		if string(e.before) == string(a0) {
			m.entries[k] = patchEntry{before: b0, after: b1, resp: other}
		}
	}
	if diff := cmp.Diff(want.Patches, m.response(a0, a1).Patches); diff != "" {
		t.Errorf("a colliding entry was returned (-want +got):\n%s", diff)
	}
}

func TestPatchMemoIsBounded(t *testing.T) {
	m := newPatchMemo()
	for i := range 3 * maxPatchMemo {
		after := fmt.Appendf(nil, `{"metadata":{"annotations":{"n":"%d"}}}`, i)
		got := m.response([]byte(`{"metadata":{}}`), after)
		want := []jsonpatch.Operation{{Operation: "add", Path: "/metadata/annotations", Value: map[string]any{"n": fmt.Sprint(i)}}}
		if diff := cmp.Diff(want, got.Patches); diff != "" {
			t.Fatalf("pair %d (-want +got):\n%s", i, diff)
		}
	}
	if n := len(m.entries); n > maxPatchMemo {
		t.Errorf("memo holds %d entries, bound is %d", n, maxPatchMemo)
	}
}

func TestPatchMemoKeepsNoErrors(t *testing.T) {
	m := newPatchMemo()
	if resp := m.response([]byte(`{`), []byte(`{}`)); resp.Allowed || resp.Result == nil {
		t.Fatalf("malformed input: got %+v, want an error response", resp.AdmissionResponse)
	}
	if len(m.entries) != 0 {
		t.Errorf("an error response was remembered")
	}
}
