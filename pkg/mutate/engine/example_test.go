package engine_test

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The required node affinity of a pod that asks for rv64gc or an x86-64-v3
// node, with no image or affinity of its own: one term per alternative.
func ExampleRequiredAffinity() {
	req, err := isa.ParseRequest("rv64gc|x86-64-v3")
	if err != nil {
		panic(err)
	}
	sel, err := engine.RequiredAffinity(req, false)
	if err != nil {
		panic(err)
	}
	for k, t := range sel.NodeSelectorTerms {
		fmt.Printf("term %d:", k)
		for _, e := range t.MatchExpressions {
			fmt.Printf(" %s %s %v;", e.Key, e.Operator, e.Values)
		}
		fmt.Println()
	}
	// Output:
	// term 0: isa.isamatch.io/arch In [riscv64]; isa.isamatch.io/rv.g Exists []; isa.isamatch.io/rv.c Exists []; isa.isamatch.io/rv.zcd Exists [];
	// term 1: isa.isamatch.io/arch In [amd64]; isa.isamatch.io/x86-64-level Gt [2];
}
