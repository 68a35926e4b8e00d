package podevents

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestUIDSet(t *testing.T) {
	tests := []struct {
		name string
		ops  []string // "+uid" adds, "-uid" removes
		want []bool   // what each add returned
		len  int
	}{
		{name: "once", ops: []string{"+a", "+a", "+b"}, want: []bool{true, false, true}, len: 2},
		{name: "removed, added again", ops: []string{"+a", "-a", "+a"}, want: []bool{true, true}, len: 1},
		{name: "full: the oldest forgotten", ops: []string{"+a", "+b", "+c", "+d", "+a", "+d"}, want: []bool{true, true, true, true, true, false}, len: 3},
		{name: "a removed UID's slot is reused in turn", ops: []string{"+a", "-a", "+b", "+c", "+d", "+b"}, want: []bool{true, true, true, true, false}, len: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newUIDSet(3)
			var got []bool
			for _, op := range tc.ops {
				uid := types.UID(op[1:])
				if op[0] == '+' {
					got = append(got, s.add(uid))
				} else {
					s.remove(uid)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("adds (-want +got):\n%s", diff)
			}
			if s.len() != tc.len {
				t.Errorf("len = %d, want %d", s.len(), tc.len)
			}
		})
	}
}
