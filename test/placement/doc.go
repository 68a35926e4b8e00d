// Package placement is the suite that places controller-owned workloads
// (Deployments and StatefulSets with Services, Jobs) on a mixed cluster
// under the stock kube-scheduler's default configuration, system default
// topology spreading included, as on managed clusters: kube-apiserver,
// etcd, kube-scheduler, kube-controller-manager, the webhook binary and a
// real registry (internal/rebalancecluster), with the kubelets' part
// simulated. Its oracle is internal/oracle, independent of pkg/isa.
//
//	KUBEBUILDER_ASSETS=$(hack/controlplane.sh) ISAMATCH_NODE_ASSETS=$(hack/controlplane.sh node) go test ./test/placement
package placement
