package release

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

func TestMergePatch(t *testing.T) {
	pod := gatedPod()
	patch, err := MergePatch(pod, released(pod))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		t.Fatal(err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta["resourceVersion"] != "7" {
		t.Errorf("patch %s: want metadata.resourceVersion 7, the lock", patch)
	}
	if strings.Contains(string(patch), `"name":"p"`) {
		t.Errorf("patch %s sends fields that did not change", patch)
	}

	// Applied to the pod as the API server stores it, with a field this
	// program does not know, the patch keeps that field.
	stored := `{"metadata":{"name":"p","namespace":"ns","resourceVersion":"7"},"spec":{"futureField":{"x":1},` +
		`"schedulingGates":[{"name":"other.example/gate"},{"name":"isa.isamatch.io/resolve"}]}}`
	out, err := jsonpatch.MergePatch([]byte(stored), patch)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Spec struct {
			FutureField     map[string]any   `json:"futureField"`
			SchedulingGates []map[string]any `json:"schedulingGates"`
			Affinity        map[string]any   `json:"affinity"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.FutureField == nil || len(got.Spec.SchedulingGates) != 1 || got.Spec.Affinity == nil {
		t.Errorf("patched pod %s: want futureField kept, one gate left and the affinity set", out)
	}

	pod.ResourceVersion = ""
	if _, err := MergePatch(pod, released(pod)); err == nil || !strings.Contains(err.Error(), "no resourceVersion") {
		t.Errorf("MergePatch of a pod without resourceVersion: %v, want an error naming it", err)
	}
}
