package inventory_test

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

func ExampleNewStatic() {
	labels := func(s string) map[string]string {
		i, err := isa.Parse(s)
		if err != nil {
			panic(err)
		}
		l := isa.NodeLabels(i, nil)
		l[isa.KubeArchLabel] = string(i.Arch)
		return l
	}
	inv := inventory.NewStatic(map[string]map[string]string{
		"node3": labels("rv64imfd"),
		"node4": labels("rv64imfdv"),
		"node5": labels("rv64imfdv"),
		"node6": {isa.KubeArchLabel: "riscv64"}, // not labelled by isamatch yet
	})
	snap := inv.Snapshot()
	for _, g := range snap.Groups {
		fmt.Println(g.ID, g.Name, g.Nodes)
	}
	fmt.Println("riscv64 nodes:", snap.ArchNodes["riscv64"])
	// Output:
	// ebbef9a036 rv64imfd_zicsr_zmmul 1
	// ecaf8da6f7 rv64imfdv_zicsr_zmmul_zve32f_zve32x_zve64d_zve64f_zve64x_zvl128b_zvl32b_zvl64b 2
	// riscv64 nodes: 4
}
