package main

import (
	"crypto/tls"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/isamatch/isamatch/internal/metricsauth"
)

// metricsServerOptions serves metrics at addr: with secure, over HTTPS
// (a self-signed certificate, HTTP/1.1 only for the HTTP/2 rapid-reset
// CVEs) to callers whose bearer token the API server authenticates
// (TokenReview, for audience only) and authorises for GET /metrics (SubjectAccessReview), as
// kubebuilder scaffolds but through internal/metricsauth, which does not
// link k8s.io/apiserver; otherwise over plain HTTP to anyone, for local
// runs.
func metricsServerOptions(addr string, secure bool, audience string) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		FilterProvider: metricsauth.FilterProvider(audience),
		TLSOpts:        []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}
