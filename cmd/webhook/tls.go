package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/isamatch/isamatch/internal/metricsauth"
)

// serverTLSOptions are the TLS settings of both HTTPS servers (webhook and
// metrics): HTTP/1.1 only unless enableHTTP2, as kubebuilder scaffolds, for
// the HTTP/2 rapid-reset and stream-cancellation CVEs.
func serverTLSOptions(enableHTTP2 bool) []func(*tls.Config) {
	if enableHTTP2 {
		return nil
	}
	return []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
}

// requireClientCert returns the TLS option that makes the webhook server
// demand a client certificate signed by a CA in caFile: a caller without
// one (anyone who reaches the Service but is not the API server) is refused
// in the handshake, before any AdmissionReview is read. The file is read
// once: restart the webhook when the API server's client CA changes.
func requireClientCert(caFile string) (func(*tls.Config), error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("server.clientCAFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("server.clientCAFile %s: no PEM certificate in it: give the CA that signs the API server's webhook client certificate", caFile)
	}
	return func(c *tls.Config) {
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}, nil
}

// metricsServerOptions serves metrics at addr: with secure, over HTTPS
// (a self-signed certificate) to callers whose bearer token the API server
// authenticates for audience (TokenReview) and authorises for GET /metrics
// (SubjectAccessReview), as kubebuilder scaffolds but through
// internal/metricsauth, which does not link k8s.io/apiserver; otherwise
// over plain HTTP to anyone, for local runs.
func metricsServerOptions(addr string, secure bool, audience string, tlsOpts []func(*tls.Config)) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		FilterProvider: metricsauth.FilterProvider(audience),
		TLSOpts:        tlsOpts,
	}
}
