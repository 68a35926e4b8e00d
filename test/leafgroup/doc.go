// Package leafgroup is the suite of leaf-group gang placement
// (docs/leaf-groups.md): a job's n replicas placed all-or-nothing in the
// smallest network leaf group whose ISA-capable free nodes hold n, else
// spread over the fewest groups, with isamatch's node affinity honoured
// inside the engine. It runs on a real kube-apiserver, etcd and
// kube-scheduler with simulated nodes labelled by the labeler, the isamatch
// webhook and registry (internal/democluster; the leaf groups, queues and
// jobs come from internal/leafcluster, shared with the demo), and two engines: Kueue's
// Topology Aware Scheduling over plain pod groups (the kueue binary
// hack/kueue.sh builds, ISAMATCH_KUEUE_ASSETS) and the stock scheduler's
// Workload API (PodGroup gangs with a topology constraint, behind the
// GenericWorkload and TopologyAwareWorkloadScheduling feature gates). The
// entry point is TestLeafGroup.
package leafgroup
