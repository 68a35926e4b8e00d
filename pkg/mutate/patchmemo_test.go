package mutate

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// encodedPatch is what Response.Complete would send for
// admission.PatchResponseFromRaw(before, after).
func encodedPatch(t *testing.T, before, after []byte) string {
	t.Helper()
	b, err := json.Marshal(admission.PatchResponseFromRaw(before, after).Patches)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPatchMemo(t *testing.T) {
	a0, a1 := []byte(`{"metadata":{}}`), []byte(`{"metadata":{"annotations":{"a":"1"}}}`)
	b0, b1 := []byte(`{"spec":{}}`), []byte(`{"spec":{"affinity":{}}}`)
	m := newPatchMemo()
	want := encodedPatch(t, a0, a1)

	// A miss answers as PatchResponseFromRaw does: operations, unencoded.
	first := m.response(a0, a1)
	if diff := cmp.Diff(want, string(patchJSON(t, first))); diff != "" {
		t.Fatalf("first answer differs from PatchResponseFromRaw (-want +got):\n%s", diff)
	}
	if len(first.Patches) == 0 || len(first.Patch) != 0 {
		t.Errorf("first answer: %d operations, %d encoded bytes; want operations only", len(first.Patches), len(first.Patch))
	}
	// A hit answers with the operations encoded once, shared by later hits.
	second := m.response(a0, a1)
	if diff := cmp.Diff(want, string(second.Patch)); diff != "" {
		t.Fatalf("remembered answer (-want +got):\n%s", diff)
	}
	if second.PatchType == nil || *second.PatchType != "JSONPatch" || len(second.Patches) != 0 {
		t.Errorf("remembered answer: patch type %v, %d operations; want JSONPatch and no operations", second.PatchType, len(second.Patches))
	}
	third := m.response(a0, a1)
	if len(third.Patch) == 0 || &third.Patch[0] != &second.Patch[0] {
		t.Errorf("the same pair was encoded again instead of answered from the memo")
	}
	// Warnings added by a caller stay with that caller's copy.
	_ = third.WithWarnings("only for this pod")
	if w := m.response(a0, a1).Warnings; len(w) != 0 {
		t.Errorf("warnings leaked into the memo: %q", w)
	}

	other := m.response(b0, b1)
	if diff := cmp.Diff(encodedPatch(t, b0, b1), string(patchJSON(t, other))); diff != "" {
		t.Errorf("a second pair got a wrong patch (-want +got):\n%s", diff)
	}

	// A hash collision: the entry under (a0, a1)'s key holds another
	// pair's bytes and answer. It must not be returned for (a0, a1).
	for k, e := range m.entries {
		if string(e.before) == string(a0) {
			m.entries[k] = &patchEntry{before: b0, after: b1, resp: other}
		}
	}
	if diff := cmp.Diff(want, string(patchJSON(t, m.response(a0, a1)))); diff != "" {
		t.Errorf("a colliding entry was returned (-want +got):\n%s", diff)
	}

	// No change: no patch and no patch type, missed or remembered.
	for range 2 {
		if same := m.response(a0, a0); len(same.Patch) != 0 || len(same.Patches) != 0 || same.PatchType != nil || !same.Allowed {
			t.Errorf("identical projections: %+v, want allowed without a patch", same.AdmissionResponse)
		}
	}
}

func TestPatchMemoIsBounded(t *testing.T) {
	m := newPatchMemo()
	for i := range 3 * maxPatchMemo {
		after := fmt.Appendf(nil, `{"metadata":{"annotations":{"n":"%d"}}}`, i)
		got := m.response([]byte(`{"metadata":{}}`), after)
		want := fmt.Sprintf(`[{"op":"add","path":"/metadata/annotations","value":{"n":"%d"}}]`, i)
		if diff := cmp.Diff(want, string(patchJSON(t, got))); diff != "" {
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
