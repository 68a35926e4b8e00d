package metricsauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
)

// DefaultAudience is the audience a metrics token must be issued for: a
// token projected for it is useless against the API server, so a labeler
// on a node whose owner is not trusted cannot harvest an API credential
// from its scraper.
const DefaultAudience = "isamatch-metrics"

// Bounds of the TokenReviews that fail: every unknown token costs one
// review, so a caller guessing tokens gets at most failedReviewBurst of
// them at once and failedReviewRate a second after that (then 429s,
// unreviewed). A token already cached is answered either way.
const (
	failedReviewRate  = rate.Limit(1)
	failedReviewBurst = 10
)

// errThrottled marks a token not reviewed because too many reviews failed.
var errThrottled = errors.New("too many unknown tokens: review throttled")

// CheckAudience reports an audience [FilterProvider] would not accept.
func CheckAudience(audience string) error {
	if audience == "" || len(audience) > 253 || strings.ContainsAny(audience, " \t\r\n,") {
		return fmt.Errorf("token audience %q: want 1..253 characters without spaces or commas (default %s)", audience, DefaultAudience)
	}
	return nil
}

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
	// audience is the one every review asks for and must be granted.
	audience string
	// failures rate-limits the reviews that reject a token.
	failures *rate.Limiter
	clock    cache.Clock
}

// newAuthenticator returns an authenticator asking reviews, its cache
// expiring by clock.
func newAuthenticator(reviews tokenReviewer, clock cache.Clock, audience string) (*authenticator, error) {
	if err := CheckAudience(audience); err != nil {
		return nil, err
	}
	key := make([]byte, sha256.Size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("token cache key: %w", err)
	}
	return &authenticator{reviews: reviews, key: key, cache: cache.NewLRUExpireCacheWithClock(CacheEntries, clock),
		audience: audience, failures: rate.NewLimiter(failedReviewRate, failedReviewBurst), clock: clock}, nil
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
// server does not accept it for the audience. err is for a review that
// could not be made (errThrottled: not made, too many failed); its message
// never holds the token.
func (a *authenticator) authenticate(ctx context.Context, token string) (user *authenticationv1.UserInfo, ok bool, err error) {
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(token))
	key := string(mac.Sum(nil))
	if v, hit := a.cache.Get(key); hit {
		user, _ = v.(*authenticationv1.UserInfo)
		return user, user != nil, nil
	}

	if a.failures.TokensAt(a.clock.Now()) < 1 {
		return nil, false, errThrottled
	}

	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review, err := a.reviews.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{a.audience}},
	}, metav1.CreateOptions{})
	if err != nil {
		// Not wrapped: the message is scrubbed of the token, in case the
		// API server or a proxy echoed the review back.
		return nil, false, fmt.Errorf("create TokenReview: %s", strings.ReplaceAll(err.Error(), token, "<token>"))
	}
	// The API server grants only audiences the token was issued for;
	// one that is not the metrics audience (an API server token) fails.
	if !review.Status.Authenticated || !slices.Contains(review.Status.Audiences, a.audience) {
		a.failures.AllowN(a.clock.Now(), 1)
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
