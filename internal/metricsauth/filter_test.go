package metricsauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	scraperToken  = "scraper-token"
	strangerToken = "stranger-token"
	// apiServerToken is the scraper's own ServiceAccount token, for the
	// API server's audience: what a labeler on a hostile node would
	// harvest if the scraper sent it.
	apiServerToken = "api-server-token"
	// apiServerAudience is the API server's own audience, which a review
	// without audiences checks the token against.
	apiServerAudience = "https://kubernetes.default.svc"
	testAudience      = "isamatch-metrics"
)

// fakeAPIServer answers TokenReviews and SubjectAccessReviews as an API
// server would, and counts them.
type fakeAPIServer struct {
	users map[string]authenticationv1.UserInfo // by token
	// audiences are those each token was issued for (default: the
	// metrics audience).
	audiences map[string][]string
	// allowed holds "user verb path" for each allowed review.
	allowed map[string]bool
	// fail makes every review fail with a 500 whose message echoes the
	// review, token included, as a careless server might.
	fail bool

	mu              sync.Mutex
	tokenReviews    int
	reviewAudiences [][]string // spec.audiences of each TokenReview
	accessSpecs     []authorizationv1.SubjectAccessReviewSpec
}

func newFakeAPIServer() *fakeAPIServer {
	return &fakeAPIServer{
		users: map[string]authenticationv1.UserInfo{
			scraperToken:   {Username: "system:serviceaccount:monitoring:prometheus", UID: "uid-1", Groups: []string{"system:serviceaccounts", "system:authenticated"}},
			strangerToken:  {Username: "stranger", UID: "uid-2", Groups: []string{"strangers"}, Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}}},
			apiServerToken: {Username: "system:serviceaccount:monitoring:prometheus", UID: "uid-1", Groups: []string{"system:serviceaccounts", "system:authenticated"}},
		},
		audiences: map[string][]string{apiServerToken: {apiServerAudience}},
		allowed:   map[string]bool{"system:serviceaccount:monitoring:prometheus get /metrics": true},
	}
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: "cannot review " + string(raw),
		})
		return
	}
	var out any
	switch req.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var r authenticationv1.TokenReview
		if err := json.Unmarshal(raw, &r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.tokenReviews++
		f.reviewAudiences = append(f.reviewAudiences, r.Spec.Audiences)
		// As the API server: a review without audiences checks the
		// token against the API server's own; the status names the
		// audiences both the review and the token have.
		want := r.Spec.Audiences
		if len(want) == 0 {
			want = []string{apiServerAudience}
		}
		has, ok := f.audiences[r.Spec.Token]
		if !ok {
			has = []string{testAudience}
		}
		var both []string
		for _, a := range want {
			if slices.Contains(has, a) {
				both = append(both, a)
			}
		}
		if u, ok := f.users[r.Spec.Token]; ok && len(both) > 0 {
			r.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u, Audiences: both}
		} else {
			r.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		out = &r
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var r authorizationv1.SubjectAccessReview
		if err := json.Unmarshal(raw, &r); err != nil || r.Spec.NonResourceAttributes == nil {
			http.Error(w, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
			return
		}
		f.accessSpecs = append(f.accessSpecs, r.Spec)
		a := r.Spec.NonResourceAttributes
		r.Status.Allowed = f.allowed[r.Spec.User+" "+a.Verb+" "+a.Path]
		out = &r
	default:
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// counts returns how many TokenReviews and SubjectAccessReviews f answered.
func (f *fakeAPIServer) counts() reviewCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return reviewCounts{TokenReviews: f.tokenReviews, AccessReviews: len(f.accessSpecs)}
}

type reviewCounts struct{ TokenReviews, AccessReviews int }

// guarded serves "metrics" behind the filter asking api, its caches
// expiring by clock (the wall clock when nil), logging into logs.
func guarded(t *testing.T, api *fakeAPIServer, clock cache.Clock, logs *strings.Builder) http.Handler {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	// JSON: the typed clients would send protobuf, which the fake does
	// not read.
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var filter func(logr.Logger, http.Handler) (http.Handler, error)
	if clock == nil {
		filter, err = FilterProvider(testAudience)(cfg, hc)
	} else {
		authn, aerr := authenticationclient.NewForConfigAndClient(cfg, hc)
		authz, zerr := authorizationclient.NewForConfigAndClient(cfg, hc)
		if aerr != nil || zerr != nil {
			t.Fatal(aerr, zerr)
		}
		filter, err = newFilter(authn.TokenReviews(), authz.SubjectAccessReviews(), clock, testAudience)
	}
	if err != nil {
		t.Fatal(err)
	}
	log := logr.Discard()
	if logs != nil {
		log = funcr.New(func(prefix, args string) { logs.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 1})
	}
	h, err := filter(log, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if auth := req.Header.Get("Authorization"); auth != "" {
			http.Error(w, "the handler saw the Authorization header", http.StatusTeapot)
			return
		}
		_, _ = io.WriteString(w, "metrics")
	}))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// scrape sends method /metrics with the Authorization header auth (none
// when empty) and returns the status and body.
func scrape(t *testing.T, h http.Handler, method, auth string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

func TestFilter(t *testing.T) {
	type result struct {
		Status int
		Body   string
		Counts reviewCounts
	}
	for _, tc := range []struct {
		name   string
		method string
		auth   string
		fail   bool
		want   result
	}{
		{name: "no token", auth: "", want: result{http.StatusUnauthorized, "Unauthorized", reviewCounts{}}},
		{name: "basic scheme", auth: "Basic c2NyYXBlcjpwdw==", want: result{http.StatusUnauthorized, "Unauthorized", reviewCounts{}}},
		{name: "empty bearer token", auth: "Bearer  " + scraperToken, want: result{http.StatusUnauthorized, "Unauthorized", reviewCounts{}}},
		{name: "unknown token", auth: "Bearer not-a-token", want: result{http.StatusUnauthorized, "Unauthorized", reviewCounts{TokenReviews: 1}}},
		{name: "authenticated, not allowed", auth: "Bearer " + strangerToken,
			want: result{http.StatusForbidden, "Authorization denied for user stranger", reviewCounts{1, 1}}},
		{name: "allowed", auth: "Bearer " + scraperToken, want: result{http.StatusOK, "metrics", reviewCounts{1, 1}}},
		{name: "scheme is case-insensitive", auth: "bearer " + scraperToken, want: result{http.StatusOK, "metrics", reviewCounts{1, 1}}},
		{name: "allowed to get, not to post", method: http.MethodPost, auth: "Bearer " + scraperToken,
			want: result{http.StatusForbidden, "Authorization denied for user system:serviceaccount:monitoring:prometheus", reviewCounts{1, 1}}},
		{name: "API server fails", auth: "Bearer " + scraperToken, fail: true,
			want: result{http.StatusInternalServerError, "Authentication failed", reviewCounts{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPIServer()
			api.fail = tc.fail
			h := guarded(t, api, nil, nil)
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			var got result
			got.Status, got.Body = scrape(t, h, method, tc.auth)
			got.Counts = api.counts()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scrape (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterAccessReviewFails(t *testing.T) {
	api := newFakeAPIServer()
	h := guarded(t, api, nil, nil)
	// Warm the token cache, then fail the SubjectAccessReview alone.
	if status, body := scrape(t, h, http.MethodGet, "Bearer "+strangerToken); status != http.StatusForbidden {
		t.Fatalf("first scrape: %d %s", status, body)
	}
	api.mu.Lock()
	api.fail = true
	api.mu.Unlock()
	status, body := scrape(t, h, http.MethodHead, "Bearer "+strangerToken)
	type result struct {
		Status int
		Body   string
	}
	want := result{http.StatusInternalServerError, "Authorization for user stranger failed"}
	if diff := cmp.Diff(want, result{status, body}); diff != "" {
		t.Errorf("scrape (-want +got):\n%s", diff)
	}
}

func TestAccessReviewSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		token  string
		method string
		want   authorizationv1.SubjectAccessReviewSpec
	}{
		{
			name: "service account", token: scraperToken, method: http.MethodGet,
			want: authorizationv1.SubjectAccessReviewSpec{
				User: "system:serviceaccount:monitoring:prometheus", UID: "uid-1",
				Groups:                []string{"system:serviceaccounts", "system:authenticated"},
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
			},
		},
		{
			// The API server adds system:authenticated to every
			// authenticated user; the review carries the extra and UID.
			name: "user without the authenticated group", token: strangerToken, method: http.MethodPost,
			want: authorizationv1.SubjectAccessReviewSpec{
				User: "stranger", UID: "uid-2",
				Groups:                []string{"strangers", "system:authenticated"},
				Extra:                 map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "post"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPIServer()
			h := guarded(t, api, nil, nil)
			scrape(t, h, tc.method, "Bearer "+tc.token)
			want := []authorizationv1.SubjectAccessReviewSpec{tc.want}
			if diff := cmp.Diff(want, api.accessSpecs); diff != "" {
				t.Errorf("SubjectAccessReviews (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFilterCaches fails when the caches go: a scraper's second request
// within the TTLs costs no review, and each TTL ends.
func TestFilterCaches(t *testing.T) {
	type step struct {
		wait   time.Duration // on the fake clock, before the scrape
		token  string
		status int
		counts reviewCounts // total after the scrape
	}
	for _, tc := range []struct {
		name  string
		fail  bool
		steps []step
	}{
		{name: "allowed scraper", steps: []step{
			{0, scraperToken, http.StatusOK, reviewCounts{1, 1}},
			{30 * time.Second, scraperToken, http.StatusOK, reviewCounts{1, 1}},
			{authenticatedTTL, scraperToken, http.StatusOK, reviewCounts{2, 1}},
			{allowedTTL, scraperToken, http.StatusOK, reviewCounts{3, 2}},
		}},
		{name: "denied user", steps: []step{
			{0, strangerToken, http.StatusForbidden, reviewCounts{1, 1}},
			{20 * time.Second, strangerToken, http.StatusForbidden, reviewCounts{1, 1}},
			{deniedTTL, strangerToken, http.StatusForbidden, reviewCounts{1, 2}},
		}},
		{name: "unknown token", steps: []step{
			{0, "not-a-token", http.StatusUnauthorized, reviewCounts{1, 0}},
			{5 * time.Second, "not-a-token", http.StatusUnauthorized, reviewCounts{1, 0}},
			{unauthenticatedTTL, "not-a-token", http.StatusUnauthorized, reviewCounts{2, 0}},
		}},
		{name: "errors are not cached", fail: true, steps: []step{
			{0, scraperToken, http.StatusInternalServerError, reviewCounts{}},
			{time.Second, scraperToken, http.StatusInternalServerError, reviewCounts{}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPIServer()
			api.fail = tc.fail
			clock := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			h := guarded(t, api, clock, nil)
			var want, got []step
			for _, s := range tc.steps {
				clock.Step(s.wait)
				status, _ := scrape(t, h, http.MethodGet, "Bearer "+s.token)
				want = append(want, s)
				got = append(got, step{s.wait, s.token, status, api.counts()})
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Errorf("scrapes (-want +got):\n%s", diff)
			}
		})
	}
}
