//go:build tools

// Package tools records the main package hack/metrics-server.sh builds, so
// that go.mod and go.sum pin every module it needs.
package tools

import (
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
