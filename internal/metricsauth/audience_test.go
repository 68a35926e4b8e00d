package metricsauth

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestAPIServerTokenRejected: a token for the API server's audience (the
// scraper's own ServiceAccount token, which a labeler on a hostile node
// could harvest and replay against the API server) is refused, and every
// TokenReview asks for the metrics audience.
func TestAPIServerTokenRejected(t *testing.T) {
	type result struct {
		Status    int
		Audiences [][]string
	}
	for _, tc := range []struct {
		name  string
		token string
		want  result
	}{
		{name: "API server token", token: apiServerToken, want: result{http.StatusUnauthorized, [][]string{{testAudience}}}},
		{name: "metrics audience token", token: scraperToken, want: result{http.StatusOK, [][]string{{testAudience}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPIServer()
			h := guarded(t, api, nil, nil)
			status, _ := scrape(t, h, http.MethodGet, "Bearer "+tc.token)
			api.mu.Lock()
			got := result{status, api.reviewAudiences}
			api.mu.Unlock()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scrape (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnknownTokensRateLimited: distinct unknown tokens cost at most the
// failure burst of TokenReviews, then are refused unreviewed until the
// rate refills; a scraper whose token is cached is still served.
func TestUnknownTokensRateLimited(t *testing.T) {
	api := newFakeAPIServer()
	clock := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	h := guarded(t, api, clock, nil)
	if status, body := scrape(t, h, http.MethodGet, "Bearer "+scraperToken); status != http.StatusOK {
		t.Fatalf("scraper: %d %s", status, body)
	}
	statuses := map[int]int{}
	for i := range 100 {
		status, _ := scrape(t, h, http.MethodGet, fmt.Sprintf("Bearer guess-%d", i))
		statuses[status]++
	}
	type result struct {
		Statuses      map[int]int
		TokenReviews  int
		ScraperStatus int
	}
	got := result{Statuses: statuses, TokenReviews: api.counts().TokenReviews}
	got.ScraperStatus, _ = scrape(t, h, http.MethodGet, "Bearer "+scraperToken)
	want := result{
		Statuses:      map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: 90},
		TokenReviews:  1 + 10,
		ScraperStatus: http.StatusOK,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("100 unknown tokens (-want +got):\n%s", diff)
	}
	// The rate refills: one failed review per second.
	clock.Step(3 * time.Second)
	for i := range 5 {
		scrape(t, h, http.MethodGet, fmt.Sprintf("Bearer later-%d", i))
	}
	if got, want := api.counts().TokenReviews, 1+10+3; got != want {
		t.Errorf("TokenReviews after 3s = %d, want %d", got, want)
	}
}
