package experiment

import (
	"fmt"
	"math/rand/v2"
)

// Task is one unit of the paper's workload.
type Task struct {
	Name string
	// Kind is "service" or "compute".
	Kind     string
	MilliCPU int64
	MemMi    int64
	// Need is the ISA the task's binary needs, in the paper's spelling:
	// "RV64I" for a base-ISA task, "RV64IMFD" and so on for extension tasks.
	Need string
}

// Workload draws n tasks with a fixed seed: one in ten is a compute task, the
// rest are services, as in the paper (90 service, 10 compute of 100). Each
// task's need is drawn uniformly from needs. Requests are sized so that the
// whole workload fits on the paper's three RISC-V workers: the paper's 100%
// holds "without resource limits".
func Workload(seed uint64, n int, needs []string) []Task {
	r := rand.New(rand.NewPCG(seed, 0x15a))
	tasks := make([]Task, 0, n)
	for i := range n {
		t := Task{Name: fmt.Sprintf("task-%03d", i), Need: needs[r.IntN(len(needs))]}
		if i%10 == 9 {
			t.Kind = "compute"
			t.MilliCPU = 500 + 50*r.Int64N(11) // 0.5 .. 1 CPU
			t.MemMi = 512 + 128*r.Int64N(13)   // 512 MiB .. 2 GiB
		} else {
			t.Kind = "service"
			t.MilliCPU = 50 + 25*r.Int64N(9) // 50m .. 250m
			t.MemMi = 64 + 32*r.Int64N(7)    // 64 .. 256 MiB
		}
		tasks = append(tasks, t)
	}
	return tasks
}
