//go:build tools

// Package tools records the main package hack/kueue.sh builds, so that go.mod
// and go.sum pin every module it needs.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
