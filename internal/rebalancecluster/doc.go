// Package rebalancecluster brings up the rebalancer's cluster on one
// machine for the rebalance suite (test/rebalance) and the demo's
// rebalancing scene (cmd/demo): kube-apiserver and etcd (envtest),
// kube-scheduler without the default topology spread, kube-controller-manager
// (Deployments, ReplicaSets, Jobs and the disruption controller, so evicted
// pods come back and PodDisruptionBudgets are enforced), the cmd/webhook
// binary behind the shipped MutatingWebhookConfiguration, Debian's
// docker-registry holding one riscv64 image, and simulated Ready nodes
// labelled by isa.NodeLabels, the labeler's label function. Nothing runs
// containers: a goroutine plays the kubelets' part for one namespace (a
// bound pod turns Running and Ready, a terminating pod is removed).
//
// The entry point is [Start]; [Cluster.Stop] tears everything down.
// [Cluster.Policy] writes the shipped policy of
// config/components/rebalance with ISAFit's arguments overridden, and
// [Cluster.RunCycle] runs the rebalancer binary (built from rebalance/, a
// module of its own) for one cycle.
package rebalancecluster
