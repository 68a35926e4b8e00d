package probe_test

import (
	"context"
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

// A Lichee Pi 4A (TH1520) reports T-Head's pre-ratification vector as
// "xtheadvector": the node gets that label and not the RVV 1.0 "rv.v".
func ExampleProbe() {
	root := "testdata/lichee-pi-4a"
	res, err := probe.Probe(context.Background(), probe.Options{
		HostRoot: root,
		// Fixture gcc scripts run as they are; a labeler chroots into /host.
		Runner: &probe.ExecRunner{Root: root},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	labels := res.Labels()
	_, hasV := labels[isa.NativePrefix+"rv.v"]
	fmt.Println(labels[isa.ArchLabel], labels[isa.NativePrefix+"rv.xtheadvector"], hasV)
	fmt.Println(res.NativeSource[:len("decided by cpuinfo (isa of 4 harts)")])
	// Output:
	// riscv64 true false
	// decided by cpuinfo (isa of 4 harts)
}
