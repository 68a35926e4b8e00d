// Package rebalance is the integration suite of the rebalancer
// (rebalance/cmd/rebalancer, descheduler with the ISAFit plugin) on a real
// control plane brought up by internal/rebalancecluster: kube-apiserver and etcd (envtest), kube-scheduler,
// kube-controller-manager (Deployments, ReplicaSets and the disruption
// controller, so evicted pods come back and PodDisruptionBudgets are
// enforced), the cmd/webhook binary behind the shipped
// MutatingWebhookConfiguration, Debian's docker-registry holding the
// image, and simulated Ready nodes labelled by isa.NodeLabels, the
// labeler's label function. Nothing runs containers: the suite plays the
// kubelets' part (a bound pod turns Running and Ready, a terminating pod is
// removed). The rebalancer runs one cycle per invocation with the policy of
// config/components/rebalance. It needs KUBEBUILDER_ASSETS and
// ISAMATCH_NODE_ASSETS (kube-controller-manager), as `make test` sets
// them; the entry point is TestRebalance.
package rebalance
