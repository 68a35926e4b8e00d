package main

import (
	"slices"
	"testing"
)

func TestParseList(t *testing.T) {
	out := "\n" + // a standard library package
		"github.com/isamatch/isamatch/hack/controlplane\n" + // the main module
		"golang.org/x/sys v0.48.0\n" +
		"golang.org/x/sys v0.48.0\n" +
		"k8s.io/api v0.0.0 k8s.io/api v0.37.2\n" +
		"github.com/isamatch/isamatch v0.0.0 ../\n" // a local replacement
	got, err := parseList(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []use{
		{path: "golang.org/x/sys", version: "v0.48.0"},
		{path: "k8s.io/api", version: "v0.37.2", replaced: "k8s.io/api"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseList = %+v, want %+v", got, want)
	}
	if _, err := parseList("golang.org/x/sys latest\n"); err == nil {
		t.Error("parseList of a version that is not semantic: no error")
	}
}

func TestSkewsAndEdits(t *testing.T) {
	uses := map[string][]use{
		"golang.org/x/sys": {
			{dir: ".", path: "golang.org/x/sys", version: "v0.49.0"},
			{dir: "hack/controlplane", path: "golang.org/x/sys", version: "v0.48.0"},
		},
		"k8s.io/api": {
			{dir: ".", path: "k8s.io/api", version: "v0.37.2"},
			{dir: "hack/controlplane", path: "k8s.io/api", version: "v0.37.1", replaced: "k8s.io/api"},
		},
		"github.com/prometheus/client_golang": {
			{dir: ".", path: "github.com/prometheus/client_golang", version: "v1.25.0"},
			{dir: "rebalance", path: "github.com/prometheus/client_golang", version: "v1.23.2", replaced: "github.com/prometheus/client_golang"},
		},
		// Kueue keeps its own Kubernetes release, and shares the rest.
		"k8s.io/client-go": {
			{dir: ".", path: "k8s.io/client-go", version: "v0.37.2"},
			{dir: "hack/kueue", path: "k8s.io/client-go", version: "v0.36.2"},
		},
		"sigs.k8s.io/controller-runtime": {
			{dir: ".", path: "sigs.k8s.io/controller-runtime", version: "v0.25.2"},
			{dir: "hack/kueue", path: "sigs.k8s.io/controller-runtime", version: "v0.24.1"},
		},
		"google.golang.org/grpc": {
			{dir: "hack/controlplane", path: "google.golang.org/grpc", version: "v1.83.1"},
			{dir: "hack/kueue", path: "google.golang.org/grpc", version: "v1.81.1"},
		},
		"go.uber.org/zap": {
			{dir: ".", path: "go.uber.org/zap", version: "v1.28.0"},
			{dir: "charts", path: "go.uber.org/zap", version: "v1.28.0"},
		},
	}
	skews := findSkews(uses)
	var paths []string
	for _, s := range skews {
		paths = append(paths, s.path)
	}
	// client_golang is pinned in rebalance on purpose, Kubernetes' modules
	// in hack/kueue; zap agrees.
	if want := []string{"golang.org/x/sys", "google.golang.org/grpc", "k8s.io/api"}; !slices.Equal(paths, want) {
		t.Fatalf("findSkews = %v, want %v", paths, want)
	}
	if got, want := skews[0].String(), "golang.org/x/sys: v0.48.0 (hack/controlplane) < v0.49.0 (.)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	edits := planEdits(skews)
	want := []string{"-require=golang.org/x/sys@v0.49.0", "-replace=k8s.io/api=k8s.io/api@v0.37.2"}
	if len(edits) != 2 || !slices.Equal(edits["hack/controlplane"], want) {
		t.Errorf("planEdits = %v, want hack/controlplane: %v", edits, want)
	}
	if got, want := edits["hack/kueue"], []string{"-require=google.golang.org/grpc@v1.83.1"}; !slices.Equal(got, want) {
		t.Errorf("planEdits for hack/kueue = %v, want %v", got, want)
	}
}
