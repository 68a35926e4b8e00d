// Package leafcluster is the leaf-group cluster of the leaf-group suite
// (test/leafgroup) and the demo's leaf-group scene (cmd/demo): RISC-V leaf
// groups of different sizes where only some nodes have V, and an x86
// group ([Nodes], [LeafLabels], [GroupOf]); and Kueue's side of
// Topology Aware Scheduling over plain pod groups: [CreateQueues] installs
// the objects of config/components/leaf-groups-kueue, [Job] builds the pods
// of one job, [Placement] counts bound pods per group. The cluster itself
// is started by internal/democluster and testbed.StartKueue.
package leafcluster
