package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// endpointKey carries the endpoint a registry read is for to the
// transport in the request context.
type endpointKey struct{}

// withEndpoint marks ctx as reading from e.
func withEndpoint(ctx context.Context, e endpoint) context.Context {
	if e.origin || e.path == "" || e.path == "/v2" {
		return ctx
	}
	return context.WithValue(ctx, endpointKey{}, e)
}

// rewriteAPIRoot returns req sent to its endpoint's API root: a hosts.toml
// host "https://mirror/prefix" serves /prefix/v2/..., and with
// override_path its path replaces /v2. Only requests to that endpoint's
// host are moved (not a token service's, nor a redirect's elsewhere).
func rewriteAPIRoot(req *http.Request) *http.Request {
	e, ok := req.Context().Value(endpointKey{}).(endpoint)
	if !ok || req.URL.Host != e.host {
		return req
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v2")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return req
	}
	out := req.Clone(req.Context())
	out.URL.Path = e.path + rest
	out.URL.RawPath = ""
	return out
}

// hostTLS returns the TLS configuration of each host whose hosts.toml
// gives it CA files or skip_verify: the system roots and RegistryCA
// (roots, nil for the system's alone) plus its CA files. One host named
// in two files must be given the same settings.
func hostTLS(eps []endpoint, roots *x509.CertPool) (map[string]*tls.Config, error) {
	out := map[string]*tls.Config{}
	from := map[string]endpoint{}
	for _, e := range eps {
		if !e.tlsChanged() {
			continue
		}
		if prev, ok := from[e.host]; ok {
			if prev.skipVerify != e.skipVerify || !slices.Equal(prev.caFiles, e.caFiles) {
				return nil, fmt.Errorf("host %s has other ca or skip_verify settings in %s than in %s; give it the same in both", e.host, e.file, prev.file)
			}
			continue
		}
		from[e.host] = e
		pool := roots
		if len(e.caFiles) > 0 {
			if pool == nil {
				var err error
				if pool, err = x509.SystemCertPool(); err != nil || pool == nil {
					pool = x509.NewCertPool()
				}
			} else {
				pool = pool.Clone()
			}
		}
		for _, f := range e.caFiles {
			pem, err := readBounded(f, maxCAFileBytes)
			if err != nil {
				return nil, fmt.Errorf("%s: host %s: ca: %w", e.file, e.host, err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: host %s: ca %s: no PEM certificate found; want a file with one or more CERTIFICATE blocks", e.file, e.host, f)
			}
		}
		out[e.host] = &tls.Config{RootCAs: pool, InsecureSkipVerify: e.skipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // skip_verify is the operator's, for this host only
	}
	return out, nil
}

// perHostTLS sends requests to the hosts with TLS settings of their own
// through a transport of their own, every other request through def.
type perHostTLS struct {
	def   http.RoundTripper
	hosts map[string]http.RoundTripper
}

func (t *perHostTLS) RoundTrip(req *http.Request) (*http.Response, error) {
	if h, ok := t.hosts[req.URL.Host]; ok {
		return h.RoundTrip(req)
	}
	return t.def.RoundTrip(req)
}
