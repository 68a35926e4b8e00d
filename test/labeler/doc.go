// Package labeler is the labeler's integration suite: the real
// cmd/labeler binary, built in BeforeSuite, labels Nodes of a real
// kube-apiserver + etcd (test/framework) from the fixture host roots of
// pkg/probe/testdata, acting as the labeler's ServiceAccount (impersonated,
// with the authentication.kubernetes.io/node-name extra a bound token
// carries) so config/daemonset's RBAC and ValidatingAdmissionPolicy are
// enforced exactly as in a cluster.
//
//	KUBEBUILDER_ASSETS="$(hack/controlplane.sh)" go test ./test/labeler -ginkgo.v
//
// The daemon spec prints the labeler's steady-state resident memory
// ("labeler steady-state RSS"); to see only that:
//
//	KUBEBUILDER_ASSETS="$(hack/controlplane.sh)" go test ./test/labeler -ginkgo.v -ginkgo.focus=daemon
package labeler
