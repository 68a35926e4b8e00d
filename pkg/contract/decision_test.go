package contract

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestParseDecision reads every stored form: today's JSON in the decision
// annotation, and the earlier readable line with the numbers (in either
// tier form) in the decision-counts annotation.
func TestParseDecision(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    DecisionCounts
		wantErr string
	}{
		{name: "today's form", ann: map[string]string{isa.DecisionAnnotation: `{"nodes":9,"tiers":[[100,1,3],[40,2,6]],"gate":"resolved"}`},
			want: DecisionCounts{RequiredNodes: 9, Tiers: []TierCounts{{100, 1, 3}, {40, 2, 6}}, Gate: GateResolved}},
		{name: "earlier form: line and counts with object tiers", ann: map[string]string{
			isa.DecisionAnnotation:       "required: ...; preferred: ...",
			isa.DecisionCountsAnnotation: `{"requiredNodes":4,"tiers":[{"weight":100,"groups":1,"nodes":1}]}`},
			want: DecisionCounts{RequiredNodes: 4, Tiers: []TierCounts{{100, 1, 1}}}},
		{name: "earlier would-deny: the line becomes the reason", ann: map[string]string{
			isa.DecisionAnnotation:       "would deny (enforcement=warn), no affinity written: bad token",
			isa.DecisionCountsAnnotation: `{"requiredNodes":0,"wouldDeny":true}`},
			want: DecisionCounts{WouldDeny: true, Reason: "bad token"}},
		{name: "no decision", ann: map[string]string{"other": "x"}, wantErr: ErrNoDecision.Error()},
		{name: "oversized", ann: map[string]string{isa.DecisionAnnotation: "{" + strings.Repeat(" ", 9<<10) + "}"}, wantErr: "over 8 KiB"},
		{name: "a tier of two numbers", ann: map[string]string{isa.DecisionAnnotation: `{"nodes":1,"tiers":[[100,1]]}`}, wantErr: "[weight, groups, nodes]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDecision(tc.ann)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if tc.wantErr == ErrNoDecision.Error() && !errors.Is(err, ErrNoDecision) {
					t.Errorf("err = %v, want ErrNoDecision", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestEncode: what is stored reads back the same, with the reason made one
// bounded line.
func TestEncode(t *testing.T) {
	c := DecisionCounts{RequiredNodes: 2, Tiers: []TierCounts{{100, 1, 2}}, WouldDeny: true, Reason: "line one\nline two " + strings.Repeat("x", 2*MaxReason)}
	s := c.Encode()
	got, err := ParseDecision(map[string]string{isa.DecisionAnnotation: s})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(got.Reason, "\n") || len(got.Reason) > MaxReason {
		t.Errorf("reason %q: want one line of at most %d bytes", got.Reason, MaxReason)
	}
	got.Reason, c.Reason = "", ""
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
