// Package framework is the shared harness of the isamatch integration and
// end-to-end suites: a real kube-apiserver and etcd (envtest) and, on request,
// a real kube-scheduler process (Start), simulated Ready nodes (MakeNode,
// CreateReadyNode), pod builders and waits (MakePod, WaitScheduled,
// WaitSettled), and Debian's docker-registry on loopback with TLS and basic
// auth (StartRegistry) that multi-platform test images are pushed to
// (PushIndex, PushImage).
//
// The control-plane binaries come from KUBEBUILDER_ASSETS, which `make test`
// exports after building them with hack/controlplane.sh.
package framework
