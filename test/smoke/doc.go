// Package smoke is a ginkgo suite that proves the test harness of package
// framework: a real kube-apiserver, etcd and kube-scheduler start, simulated
// nodes become Ready and receive pods, and Debian's docker-registry serves
// multi-platform indexes over TLS with basic auth. Run it with `make test`
// (or go test ./test/smoke/ with KUBEBUILDER_ASSETS set).
package smoke
