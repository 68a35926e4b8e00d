package metricsauth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/cache"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// FilterProvider returns the metrics server's FilterProvider: requests
// need a bearer token the API server accepts for audience (TokenReview
// with that audience: a token for the API server itself is refused)
// whose user it allows to do the request's verb on its path
// (SubjectAccessReview, e.g. get on /metrics). The binary's
// ServiceAccount needs create on tokenreviews.authentication.k8s.io and
// subjectaccessreviews.authorization.k8s.io; the scraper needs the
// non-resource URL /metrics with verb get, and sends a ServiceAccount
// token projected for audience (see config/components/monitoring).
func FilterProvider(audience string) func(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	return func(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
		authn, err := authenticationclient.NewForConfigAndClient(c, httpClient)
		if err != nil {
			return nil, fmt.Errorf("authentication client: %w", err)
		}
		authz, err := authorizationclient.NewForConfigAndClient(c, httpClient)
		if err != nil {
			return nil, fmt.Errorf("authorization client: %w", err)
		}
		return newFilter(authn.TokenReviews(), authz.SubjectAccessReviews(), clock.RealClock{}, audience)
	}
}

// newFilter returns the filter asking tokens (for audience) and access,
// its caches expiring by clock.
func newFilter(tokens tokenReviewer, access accessReviewer, clock cache.Clock, audience string) (metricsserver.Filter, error) {
	authn, err := newAuthenticator(tokens, clock, audience)
	if err != nil {
		return nil, err
	}
	authz := newAuthorizer(access, clock)
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := bearerToken(req)
			if !ok {
				log.V(1).Info("Refused a metrics request without a bearer token", "path", req.URL.Path)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			user, ok, err := authn.authenticate(req.Context(), token)
			if errors.Is(err, errThrottled) {
				log.V(1).Info("Refused a metrics request: too many unknown tokens", "path", req.URL.Path)
				http.Error(w, "Too many requests with unknown tokens", http.StatusTooManyRequests)
				return
			}
			if err != nil {
				log.Error(err, "Authentication failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if !ok {
				log.V(1).Info("Refused a metrics request with a token the API server does not accept", "path", req.URL.Path)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			// Authenticated: the token is of no use to the handler.
			req.Header.Del("Authorization")

			allowed, reason, err := authz.authorize(req.Context(), user, strings.ToLower(req.Method), req.URL.Path)
			if err != nil {
				msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
				log.Error(err, "Authorization failed", "user", user.Username)
				http.Error(w, msg, http.StatusInternalServerError)
				return
			}
			if !allowed {
				log.V(1).Info("Refused a metrics request", "user", user.Username, "path", req.URL.Path, "reason", reason)
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", user.Username), http.StatusForbidden)
				return
			}
			handler.ServeHTTP(w, req)
		}), nil
	}, nil
}
