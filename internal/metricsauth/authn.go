package metricsauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
)

const (
	// authenticatedTTL and unauthenticatedTTL are how long a TokenReview's
	// answer is reused: the apiserver's webhook token defaults. A token
	// revoked inside authenticatedTTL is still accepted until it ends, as
	// by the API server's own webhook authenticator.
	authenticatedTTL   = 2 * time.Minute
	unauthenticatedTTL = 10 * time.Second
	// reviewTimeout bounds one review call, as controller-runtime's filter
	// bounds its TokenReviews.
	reviewTimeout = 10 * time.Second
	// allUsersGroup is the group the API server adds to every
	// authenticated user but anonymousUser; a review that omits it gets it
	// added.
	allUsersGroup = "system:authenticated"
	anonymousUser = "system:anonymous"
)

// CacheEntries bounds each cache (tokens, decisions). An entry is a 32-byte
// key and a user (name, UID, groups: a few hundred bytes for a
// ServiceAccount), so both caches together stay under a few MiB even when
// full of distinct callers; a scraper needs one entry in each.
const CacheEntries = 1024

// tokenReviewer creates TokenReviews: the typed client's TokenReviews().
type tokenReviewer interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// authenticator authenticates bearer tokens with TokenReviews and caches
// the answers.
type authenticator struct {
	reviews tokenReviewer
	// key keys the HMAC that names a token in the cache: a per-process
	// secret, so the cache never holds anything a token can be recovered
	// or checked from.
	key   []byte
	cache *cache.LRUExpireCache
}

// newAuthenticator returns an authenticator asking reviews, its cache
// expiring by clock.
func newAuthenticator(reviews tokenReviewer, clock cache.Clock) (*authenticator, error) {
	key := make([]byte, sha256.Size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("token cache key: %w", err)
	}
	return &authenticator{reviews: reviews, key: key, cache: cache.NewLRUExpireCacheWithClock(CacheEntries, clock)}, nil
}

// bearerToken returns the token of req's "Authorization: Bearer <token>"
// header, as the API server reads it: the scheme is case-insensitive, and
// an empty token is no token.
func bearerToken(req *http.Request) (string, bool) {
	auth := strings.TrimSpace(req.Header.Get("Authorization"))
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// authenticate returns the user token belongs to, or ok false when the API
// server does not accept it. err is for a review that could not be made;
// its message never holds the token.
func (a *authenticator) authenticate(ctx context.Context, token string) (user *authenticationv1.UserInfo, ok bool, err error) {
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(token))
	key := string(mac.Sum(nil))
	if v, hit := a.cache.Get(key); hit {
		user, _ = v.(*authenticationv1.UserInfo)
		return user, user != nil, nil
	}

	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review, err := a.reviews.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		// Not wrapped: the message is scrubbed of the token, in case the
		// API server or a proxy echoed the review back.
		return nil, false, fmt.Errorf("create TokenReview: %s", strings.ReplaceAll(err.Error(), token, "<token>"))
	}
	if !review.Status.Authenticated {
		a.cache.Add(key, (*authenticationv1.UserInfo)(nil), unauthenticatedTTL)
		return nil, false, nil
	}
	user = review.Status.User.DeepCopy()
	if user.Username != anonymousUser && !slices.Contains(user.Groups, allUsersGroup) {
		user.Groups = append(user.Groups, allUsersGroup)
	}
	a.cache.Add(key, user, authenticatedTTL)
	return user, true, nil
}
