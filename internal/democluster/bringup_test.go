package democluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestWaitDecisionCount(t *testing.T) {
	boom := errors.New("boom")
	ann := func(human, counts string) map[string]string {
		m := map[string]string{}
		if human != "" {
			m[isa.DecisionAnnotation] = human
		}
		if counts != "" {
			m[isa.DecisionCountsAnnotation] = counts
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		decisions []map[string]string
		errAt     int // index of decisions at which admit fails; -1 never
		want      int
		wantLast  string
		wantCalls int
		wantErr   bool
	}{
		{
			name: "counts all nodes on third try",
			decisions: []map[string]string{nil, ann("two", `{"requiredNodes":2}`),
				ann("three", `{"requiredNodes":3,"tiers":[{"weight":100,"groups":1,"nodes":3}]}`), ann("three", `{"requiredNodes":3}`)},
			errAt: -1, want: 3, wantLast: "three", wantCalls: 3,
		},
		{
			name:      "the stored decision",
			decisions: []map[string]string{ann(`{"nodes":2}`, ""), ann(`{"nodes":3,"tiers":[[100,1,3]]}`, "")},
			errAt:     -1, want: 3, wantLast: `{"nodes":3,"tiers":[[100,1,3]]}`, wantCalls: 2,
		},
		{
			name:      "human line without counts never matches",
			decisions: []map[string]string{ann("riscv64 (1 node now)", "")},
			errAt:     -1, want: 1, wantLast: "riscv64 (1 node now)", wantErr: true,
		},
		{
			name:      "malformed counts fail",
			decisions: []map[string]string{ann("rv", `{"requiredNodes":"one"}`)},
			errAt:     -1, want: 1, wantLast: "rv", wantCalls: 1, wantErr: true,
		},
		{
			name:      "admit error stops and keeps the last decision",
			decisions: []map[string]string{ann("rv", `{"requiredNodes":1}`), nil},
			errAt:     1, want: 2, wantLast: "rv", wantCalls: 2, wantErr: true,
		},
		{
			name:      "error before any decision says so",
			decisions: []map[string]string{nil},
			errAt:     0, want: 2, wantLast: "(no decision annotation: the webhook did not mutate the pod)", wantCalls: 1, wantErr: true,
		},
		{
			name:      "never reaches the count",
			decisions: []map[string]string{ann("rv", `{"requiredNodes":4}`)},
			errAt:     -1, want: 5, wantLast: "rv", wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			last, err := WaitDecisionCount(t.Context(), time.Millisecond, 50*time.Millisecond, tc.want, func(context.Context) (map[string]string, error) {
				i := min(calls, len(tc.decisions)-1)
				calls++
				if i == tc.errAt {
					return nil, boom
				}
				return tc.decisions[i], nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("WaitDecisionCount error = %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantLast, last); diff != "" {
				t.Errorf("last decision (-want +got):\n%s", diff)
			}
			if tc.wantCalls > 0 && calls != tc.wantCalls {
				t.Errorf("admit called %d times, want %d", calls, tc.wantCalls)
			}
		})
	}
}
