//go:build tools

package charts

// The helm command test/node installs the chart with (go -C charts build
// helm.sh/helm/v4/cmd/helm): its version is this module's.
import _ "helm.sh/helm/v4/cmd/helm"
