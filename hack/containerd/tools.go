//go:build tools

// Package tools records the containerd commands hack/controlplane.sh builds,
// so that `go mod tidy` keeps their dependencies.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
)
