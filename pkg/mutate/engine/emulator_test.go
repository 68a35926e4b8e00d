package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"
)

// TestEmulatorSettingChoice: the QEMU_CPU chosen is the value most nodes
// emulating the request record, with the reasons for choosing none.
func TestEmulatorSettingChoice(t *testing.T) {
	rv := testnodes.MustISA(t, "rv64gcv")
	arm := testnodes.MustISA(t, "arm64+sve")
	tests := []struct {
		name  string
		nodes map[string][2]string // name -> (emulated, QEMU_CPU)
		req   []isa.ISA
		want  contract.EmulatorSetting
	}{
		{
			name:  "the value most nodes record",
			nodes: map[string][2]string{"a": {"rv64gcv", "rv64,v=true"}, "b": {"rv64gcv", "rv64,v=true"}, "c": {"rv64gcv", "max"}},
			req:   []isa.ISA{rv},
			want:  contract.EmulatorSetting{QEMUCPU: "rv64,v=true", Nodes: 2, Others: 1},
		},
		{
			name:  "a tie: a value beats none, the smaller value wins",
			nodes: map[string][2]string{"a": {"rv64gcv", "rv64,v=true"}, "b": {"rv64gcv", "max"}, "c": {"rv64gcv", ""}},
			req:   []isa.ISA{rv},
			want:  contract.EmulatorSetting{QEMUCPU: "max", Nodes: 1, Others: 2},
		},
		{
			name:  "nodes whose default CPU runs it",
			nodes: map[string][2]string{"a": {"rv64gcv", ""}, "b": {"rv64gcv", ""}, "c": {"rv64gcv", "max"}},
			req:   []isa.ISA{rv},
			want:  contract.EmulatorSetting{Reason: engine.EmulatorDefault, Nodes: 2, Others: 1},
		},
		{
			name:  "only nodes that emulate the request count",
			nodes: map[string][2]string{"a": {"rv64gc", "rv64"}, "b": {"rv64gcv", "max"}},
			req:   []isa.ISA{rv},
			want:  contract.EmulatorSetting{QEMUCPU: "max", Nodes: 1},
		},
		{
			name:  "two architectures: QEMU_CPU names one CPU",
			nodes: map[string][2]string{"a": {"rv64gcv", "max"}, "b": {"arm64+sve", "max"}},
			req:   []isa.ISA{rv, arm},
			want:  contract.EmulatorSetting{Reason: engine.EmulatorSeveralArchitectures, Others: 2},
		},
		{
			name:  "a value outside QEMU's -cpu syntax is not used",
			nodes: map[string][2]string{"a": {"rv64gcv", "max;rm -rf /"}},
			req:   []isa.ISA{rv},
			want:  contract.EmulatorSetting{Reason: engine.EmulatorDefault, Nodes: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			em := inventory.NewEmulators()
			for name, n := range tc.nodes {
				labels := testnodes.QEMULabels(t, "amd64", "x86-64-v3", n[0])
				em.Set(name, labels, map[string]string{isa.QEMUCPUAnnotation(testnodes.MustISA(t, n[0]).Arch): n[1]})
			}
			got := engine.ChooseEmulator(em, &isa.Request{Alternatives: tc.req})
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("setting (-want +got):\n%s", diff)
			}
		})
	}
}
