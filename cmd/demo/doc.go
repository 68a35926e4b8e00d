// Command demo runs the ISAMatch paper's experiment end to end on this
// machine: it starts an embedded control plane with the stock
// kube-scheduler, Debian's docker-registry, the paper's five nodes labelled
// by the real labeler and the real webhook (internal/democluster), runs each
// scenario of internal/experiment without and with isamatch, and prints the
// comparison table and where the pods went.
//
// Then the rebalancing scene, on a cluster of its own
// (internal/rebalancecluster, which needs kube-controller-manager from
// ISAMATCH_NODE_ASSETS; without it the scene is skipped with a line saying
// why): rv64imfd replicas placed on vector nodes while their best-fit nodes
// were full, the filler removed, rebalancer cycles with the shipped policy
// until every replica is on a best-fit node (at most 5, each started once
// the replicas are older than the policy's minPodAge) and one more, and a
// before/after table of the replicas per node and the evictions. The
// scheduler runs with its default configuration.
//
// Last the leaf-group scene (internal/leafcluster's RISC-V leaf groups of
// 4, 8 and 16 nodes of which 4, 6 and 5 have V, and Kueue from
// ISAMATCH_KUEUE_ASSETS; skipped without it): one Kueue job of 5 V
// replicas, a pod group with a preferred leaf-group topology, and the
// table of group to pods.
//
//	make demo                       # builds the control plane once, then runs this
//	go run ./cmd/demo -seed 7 -pods # another workload, every pod's node listed
//	go run ./cmd/demo -scenarios=rebalance,leafgroup
//
// It exits 0 when isamatch placed every pod correctly and on a best-fit node
// whenever one had room (in the rebalancing scene: every rv64imfd replica
// on a best-fit node within 5 cycles, one eviction per replica moved, and
// none in the cycle after or of a replacement;
// in the leaf-group scene: every pod on a V node, all in the smallest group
// whose V nodes hold the job),
// 1 with a message naming the scenario otherwise, and 2 on a usage error.
package main
