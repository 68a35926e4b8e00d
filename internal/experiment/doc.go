// Package experiment reproduces the ISAMatch paper's placement experiment on a
// real control plane: the cluster of the paper's Table 1 ([PaperCluster]), a
// seeded workload of service and compute tasks ([Workload]), the paper's
// scenarios ([Scenarios]) and an oracle that scores each placement for
// correctness and best fit ([Evaluate]). [Runner] creates the pods through the
// API server, waits for the stock kube-scheduler to bind them and evaluates
// the result; cmd/demo and the e2e suite share it.
//
// The verdicts come from internal/oracle, which is deliberately independent
// of pkg/isa, so a bug in pkg/isa cannot hide itself.
package experiment
