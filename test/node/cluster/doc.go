// Package cluster runs a real one-node Kubernetes cluster on this machine
// for the node suite (test/node): etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, containerd with runc and the CNI
// bridge, the kubelet and kube-proxy, all as child processes with their
// state in one directory. Check says whether the machine can; Start brings
// the node up and waits until it is Ready; Stop leaves the host as it was.
// StartRegistry runs the plain-HTTP registry the runtime pulls from and
// PushPause the sandbox image built from source (no internet needed).
// docs/real-node.md lists what the kubelet needs here and why.
package cluster
