package labeler_test

import (
	"fmt"
	"sort"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/labeler"
)

// Diff names only isamatch's keys: new or changed ones with their value,
// stale ones as nil (null in the merge patch); kubernetes.io/arch is left
// alone.
func ExampleDiff() {
	current := map[string]string{
		isa.KubeArchLabel:         "riscv64",
		isa.NativePrefix + "rv.v": "true",
		isa.ArchLabel:             "riscv64",
	}
	desired := map[string]string{
		isa.ArchLabel:                        "riscv64",
		isa.NativePrefix + "rv.xtheadvector": "true",
	}
	change, err := labeler.Diff(current, desired)
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := make([]string, 0, len(change))
	for k := range change {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := change[k]; v != nil {
			fmt.Printf("set %s=%s\n", k, *v)
		} else {
			fmt.Printf("delete %s\n", k)
		}
	}
	// Output:
	// delete isa.isamatch.io/rv.v
	// set isa.isamatch.io/rv.xtheadvector=true
}
