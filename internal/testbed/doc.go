// Package testbed runs a real, local Kubernetes environment for the ginkgo
// suites under test/ and for the demo and bench tools: a kube-apiserver and
// etcd (envtest) and, on request, a real kube-scheduler process (Start),
// simulated Ready nodes (MakeNode, CreateReadyNode), pod builders and waits
// (MakePod, WaitScheduled, WaitSettled), Debian's docker-registry on loopback
// with TLS and basic auth (StartRegistry) that multi-platform images are
// pushed to (PushIndex, PushImage), registries that are slow
// (StartSlowProxy) or drip one byte a second (StartDripRegistry), child processes on free ports
// (StartProcess, StartOnFreePorts) and the one loader of the shipped
// MutatingWebhookConfiguration
// (ShippedWebhookConfiguration, EnvtestWebhookConfiguration). The binaries
// are built by internal/gobuild, and started with the configuration files
// of the subpackage configfile.
//
// The control-plane binaries come from KUBEBUILDER_ASSETS, which `make test`
// exports after building them with hack/controlplane.sh.
//
// The package imports no test framework, so binaries may use it; the ginkgo
// glue (skip when a tool is missing, attach logs to a failed spec) lives in
// test/framework.
package testbed
