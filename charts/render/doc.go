// Package render renders a Helm chart as `helm install --dry-run=client`
// does, with Helm's Go module: the entry point is [Chart]. The chart's tests
// (charts/) and `make release` (hack/release) share it.
package render
