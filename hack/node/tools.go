//go:build tools

// Package tools records the main packages `hack/controlplane.sh node` builds,
// so that go.mod and go.sum pin every module they need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
