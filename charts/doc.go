// Package charts tests the Helm chart charts/isamatch against the one source
// of its objects, config/: the chart rendered with its default values, and
// with each optional part switched on, gives the same objects as
// `kubectl kustomize` of config/ with the matching component; helm lint
// passes; values.schema.json refuses what the templates cannot render. It
// also pins the helm command (tools.go) that test/node installs the chart
// with, built from Helm's Go module:
//
//	go -C charts test ./...
//	go -C charts build -o bin/helm helm.sh/helm/v4/cmd/helm
//
// The entry point of the tests is renderChart (render.Chart, which
// hack/release shares) beside manifests.RenderYAML (config/).
package charts
