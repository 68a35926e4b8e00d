package mutate

import (
	"encoding/json"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestPatchTouchesOnlyAffinityAndDecision admits raw pods with fields this
// webhook does not model (a newer API server's spec field, env, probes,
// pod anti-affinity, other annotations) and checks, on the raw JSON, that
// the patch changes nothing but the decision annotation, the node affinity
// and, on a pod without any, the topology spread constraints, and that
// admitting the result again changes nothing.
func TestPatchTouchesOnlyAffinityAndDecision(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		ownSpread bool
	}{
		{
			name: "no annotations, no affinity",
			raw:  `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"riscv:1"}]}}`,
		},
		{
			name: "empty annotations and affinity objects",
			raw:  `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","labels":{"app":"x"},"annotations":{}},"spec":{"containers":[{"name":"c","image":"riscv:1"}],"affinity":{}}}`,
		},
		{
			name: "pod anti-affinity only",
			raw: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","labels":{"app":"x"},"annotations":{"other":"kept"}},"spec":{"containers":[{"name":"c","image":"riscv:1"}],
				"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname"}}]}}}}`,
		},
		{
			name: "unknown fields, other annotations, pod anti-affinity, user node affinity",
			raw: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","labels":{"app":"x"},
				"annotations":{"isa.request":"rv64imfd","kubectl.kubernetes.io/last-applied-configuration":"{\"big\":\"copy\"}","a/b~c":"escaped key"}},
				"spec":{"futureSpecField":{"nested":[1,2,3]},"restartPolicy":"Always",
				"containers":[{"name":"c","image":"riscv:1","env":[{"name":"K","value":"v"}],"futureContainerField":true,
					"readinessProbe":{"httpGet":{"path":"/","port":8080}}}],
				"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"x"}},"topologyKey":"kubernetes.io/hostname"}]},
					"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]},
					"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":7,"preference":{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}]}}]}}},
				"status":{"futureStatusField":"kept"}}`,
		},
		{
			name: "own topology spread constraints",
			raw: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"riscv:1"}],
				"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"x"}}}]}}`,
			ownSpread: true,
		},
	}
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := rawRequest("default", []byte(tc.raw))
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed || len(patchJSON(t, resp)) == 0 {
				t.Fatalf("allowed=%v patches=%d result=%+v, want a mutation", resp.Allowed, len(patchJSON(t, resp)), resp.Result)
			}
			patched := applyRaw(t, req.Object.Raw, resp)

			before, after := decodeAny(t, req.Object.Raw), decodeAny(t, patched)
			d, _ := object(after, "metadata", "annotations")[isa.DecisionAnnotation].(string)
			if c, err := contract.ParseDecisionCounts(d); err != nil || len(c.Tiers) == 0 {
				t.Errorf("decision annotation = %q (%v), want a decision with tiers", d, err)
			}
			if object(after, "spec", "affinity", "nodeAffinity")["requiredDuringSchedulingIgnoredDuringExecution"] == nil {
				t.Errorf("no required node affinity after the patch: %s", patched)
			}
			spread, _ := object(after, "spec")["topologySpreadConstraints"].([]any)
			if len(spread) != 1 {
				t.Fatalf("topologySpreadConstraints after the patch = %v, want one", spread)
			}
			if tc.ownSpread {
				if key := spread[0].(map[string]any)["topologyKey"]; key != "topology.kubernetes.io/zone" {
					t.Errorf("the pod's own constraint was replaced by one on %v", key)
				}
			} else {
				delete(object(after, "spec"), "topologySpreadConstraints")
			}
			for _, doc := range []map[string]any{before, after} {
				if a := object(doc, "metadata", "annotations"); a != nil {
					delete(a, isa.DecisionAnnotation)
					delete(a, isa.DecisionCountsAnnotation)
					if len(a) == 0 {
						delete(object(doc, "metadata"), "annotations")
					}
				}
				if a := object(doc, "spec", "affinity"); a != nil {
					delete(a, "nodeAffinity")
					if len(a) == 0 {
						delete(object(doc, "spec"), "affinity")
					}
				}
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the patch changed more than the decision and the node affinity (-before +after):\n%s", diff)
			}

			again := m.Handle(t.Context(), rawRequest("default", patched))
			if !again.Allowed || len(patchJSON(t, again)) != 0 {
				t.Errorf("second admission: allowed=%v patches=%v, want none", again.Allowed, patchJSON(t, again))
			}
		})
	}
}

func decodeAny(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// object walks nested JSON objects; nil when a key is missing or not an
// object.
func object(doc map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, _ := doc[k].(map[string]any)
		if next == nil {
			return nil
		}
		doc = next
	}
	return doc
}
