package democluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWaitDecisionCount(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		decisions []string
		errAt     int // index of decisions at which admit fails; -1 never
		want      int
		wantLast  string
		wantCalls int
		wantErr   bool
	}{
		{
			name:      "counts all nodes on third try",
			decisions: []string{"", "riscv64 (2 nodes now)", "riscv64 (3 nodes now)", "riscv64 (3 nodes now)"},
			errAt:     -1, want: 3, wantLast: "riscv64 (3 nodes now)", wantCalls: 3,
		},
		{
			name:      "one node singular",
			decisions: []string{"amd64 (1 node now)"},
			errAt:     -1, want: 1, wantLast: "amd64 (1 node now)", wantCalls: 1,
		},
		{
			name:      "admit error stops and keeps the last decision",
			decisions: []string{"rv (1 node now)", ""},
			errAt:     1, want: 2, wantLast: "rv (1 node now)", wantCalls: 2, wantErr: true,
		},
		{
			name:      "error before any decision says so",
			decisions: []string{""},
			errAt:     0, want: 2, wantLast: "(no decision annotation: the webhook did not mutate the pod)", wantCalls: 1, wantErr: true,
		},
		{
			name:      "never reaches the count",
			decisions: []string{"rv (4 nodes now)"},
			errAt:     -1, want: 5, wantLast: "rv (4 nodes now)", wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			last, err := WaitDecisionCount(t.Context(), time.Millisecond, 50*time.Millisecond, tc.want, func(context.Context) (string, error) {
				i := min(calls, len(tc.decisions)-1)
				calls++
				if i == tc.errAt {
					return "", boom
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
