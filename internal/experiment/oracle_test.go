package experiment

import "testing"

func TestFitFollowsThePaper(t *testing.T) {
	nodes := PaperCluster()
	byName := map[string]NodeSpec{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	tests := []struct {
		name      string
		need      string
		emulation bool
		node      string
		wantOK    bool
	}{
		{"imfd task on imfd node", "RV64IMFD", false, "node3", true},
		{"imfd task on imfdv node", "RV64IMFD", false, "node5", true},
		{"imfdv task on imfd node", "RV64IMFDV", false, "node3", false},
		{"imfd task on the x86 master", "RV64IMFD", false, "node1", false},
		{"imfd task on arm64", "RV64IMFD", false, "node2", false},
		{"base task on any riscv node", "RV64I", false, "node4", true},
		{"cross task on the master", "RV64IMFDV", true, "node1", true},
		{"cross task native fallback", "RV64IMFDV", true, "node5", true},
		{"native task ignores the master's QEMU", "RV64IMFDV", false, "node1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, _ := fit(byName[tc.node], Task{Need: tc.need}, tc.emulation)
			if ok != tc.wantOK {
				t.Errorf("fit(%s, %s) = %v, want %v", tc.node, tc.need, ok, tc.wantOK)
			}
		})
	}
	// The paper's worked example: RV64IMFD prefers node3 (4/4) to node5 (4/5).
	_, s3 := fit(byName["node3"], Task{Need: "RV64IMFD"}, false)
	_, s5 := fit(byName["node5"], Task{Need: "RV64IMFD"}, false)
	if s3 <= s5 {
		t.Errorf("affinity on node3 %v not above node5 %v", s3, s5)
	}
	// The emulation flow prefers the master over native nodes.
	_, e1 := fit(byName["node1"], Task{Need: "RV64IMFDV"}, true)
	_, e5 := fit(byName["node5"], Task{Need: "RV64IMFDV"}, true)
	if e1 <= e5 {
		t.Errorf("emulation score on node1 %v not above node5 %v", e1, e5)
	}
}

func TestEvaluateTracksRoom(t *testing.T) {
	nodes := []NodeSpec{
		{Name: "small", Arch: "riscv64", MilliCPU: 1000, MemMi: 1024, Modules: "IMFD"},
		{Name: "big", Arch: "riscv64", MilliCPU: 8000, MemMi: 8192, Modules: "IMFDV"},
		{Name: "x86", Arch: "amd64", MilliCPU: 8000, MemMi: 8192},
	}
	sc := Scenario{Name: "t"}
	task := func(name string) Task { return Task{Name: name, Need: "RV64IMFD", MilliCPU: 600, MemMi: 100} }
	got := Evaluate(nodes, sc, true, []Placement{
		{task("a"), "small"}, // best fit
		{task("b"), "big"},   // small is full (600+600 > 1000): big is the best with room
		{task("c"), "big"},   // still best with room
		{task("d"), "x86"},   // wrong
		{task("e"), ""},      // unscheduled
	})
	want := Result{Pods: 5, Scheduled: 4, Correct: 3, Eligible: 5, BestFit: 3}
	if got.Pods != want.Pods || got.Scheduled != want.Scheduled || got.Correct != want.Correct ||
		got.Eligible != want.Eligible || got.BestFit != want.BestFit {
		t.Errorf("Evaluate = %+v, want counts %+v", got, want)
	}
	if len(got.Wrong) != 1 {
		t.Errorf("Wrong = %v, want one entry", got.Wrong)
	}
	// Had "b" gone to big while small still had room, it would not be best fit.
	got = Evaluate(nodes, sc, true, []Placement{{Task{Name: "a", Need: "RV64IMFD", MilliCPU: 100, MemMi: 10}, "big"}})
	if got.BestFit != 0 || got.Correct != 1 {
		t.Errorf("looser fit with room on the best node: %+v", got)
	}
}

func TestWorkloadIsSeededAndFits(t *testing.T) {
	a := Workload(7, 100, ExtensionNeeds)
	b := Workload(7, 100, ExtensionNeeds)
	var cpu int64
	compute := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("task %d differs between runs with the same seed: %+v vs %+v", i, a[i], b[i])
		}
		cpu += a[i].MilliCPU
		if a[i].Kind == "compute" {
			compute++
		}
	}
	if compute != 10 {
		t.Errorf("compute tasks = %d, want 10 of 100", compute)
	}
	if cpu > 3*8000 {
		t.Errorf("workload needs %dm CPU, more than the three RISC-V workers have", cpu)
	}
	if c := Workload(8, 100, ExtensionNeeds); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Errorf("a different seed gave the same first tasks")
	}
}
