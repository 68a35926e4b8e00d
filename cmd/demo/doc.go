// Command demo runs the ISAMatch paper's experiment end to end on this
// machine: it starts an embedded control plane with the stock
// kube-scheduler, Debian's docker-registry, the paper's five nodes labelled
// by the real labeler and the real webhook (internal/democluster), runs each
// scenario of internal/experiment without and with isamatch, and prints the
// comparison table and where the pods went.
//
//	make demo                       # builds the control plane once, then runs this
//	go run ./cmd/demo -seed 7 -pods # another workload, every pod's node listed
//
// It exits 0 when isamatch placed every pod correctly and on a best-fit node
// whenever one had room, 1 with a message naming the scenario otherwise, and
// 2 on a usage error.
package main
