package metricsauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
)

// allowedTTL and deniedTTL are how long a SubjectAccessReview's answer is
// reused: the apiserver's delegating authoriser defaults, which
// controller-runtime's filter keeps.
const (
	allowedTTL = 5 * time.Minute
	deniedTTL  = 30 * time.Second
)

// accessReviewer creates SubjectAccessReviews: the typed client's
// SubjectAccessReviews().
type accessReviewer interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// authorizer asks the API server whether a user may use a non-resource
// path, and caches the answers.
type authorizer struct {
	reviews accessReviewer
	cache   *cache.LRUExpireCache
}

// decision is a cached SubjectAccessReview answer.
type decision struct {
	allowed bool
	reason  string
}

// newAuthorizer returns an authorizer asking reviews, its cache expiring
// by clock.
func newAuthorizer(reviews accessReviewer, clock cache.Clock) *authorizer {
	return &authorizer{reviews: reviews, cache: cache.NewLRUExpireCacheWithClock(CacheEntries, clock)}
}

// accessReviewSpec is the review of user doing verb on the non-resource
// path, as the API server's own authoriser would be asked.
func accessReviewSpec(user *authenticationv1.UserInfo, verb, path string) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:                  user.Username,
		UID:                   user.UID,
		Groups:                user.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}
	if user.Extra != nil {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	return spec
}

// authorize reports whether user may do verb on path. A review that
// neither allows nor denies (no authoriser has an opinion) is a denial.
func (a *authorizer) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (allowed bool, reason string, err error) {
	spec := accessReviewSpec(user, verb, path)
	raw, err := json.Marshal(spec)
	if err != nil {
		return false, "", fmt.Errorf("encode SubjectAccessReview: %w", err)
	}
	sum := sha256.Sum256(raw)
	key := string(sum[:])
	if v, hit := a.cache.Get(key); hit {
		d := v.(decision)
		return d.allowed, d.reason, nil
	}

	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review, err := a.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("create SubjectAccessReview: %w", err)
	}
	d := decision{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason}
	ttl := deniedTTL
	if d.allowed {
		ttl = allowedTTL
	}
	a.cache.Add(key, d, ttl)
	return d.allowed, d.reason, nil
}
