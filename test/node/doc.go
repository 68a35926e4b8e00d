// Package node is the real-node suite: it installs isamatch exactly as a
// user does, `kubectl apply -k` of an overlay of config/ that points at the
// images `make images` built, into a one-node cluster running on this
// machine (test/node/cluster: kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler, containerd with runc and the CNI bridge, the kubelet and
// kube-proxy), and checks what a user would: the labeler DaemonSet labels
// the node like `labeler --print` on the host, the webhook Deployment
// becomes ready with its own certificate, pods are placed (or kept Pending)
// by the ISA they request, a removed label comes back, and `kubectl delete
// -k` removes everything.
//
//	make test-node
//
// It needs root, the binaries of `hack/controlplane.sh` and
// `hack/controlplane.sh node` (KUBEBUILDER_ASSETS and ISAMATCH_NODE_ASSETS)
// and the Debian packages of `hack/deps.sh node`. Without
// ISAMATCH_NODE_ASSETS it skips (so `go test ./...` does not start a
// kubelet); under CI=true a missing binary or package fails it. What it
// needs from the machine and what it proves is in docs/real-node.md.
package node
