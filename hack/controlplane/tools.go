//go:build tools

// Package tools records the main packages hack/controlplane.sh builds, so that
// go.mod and go.sum pin every module they need.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
