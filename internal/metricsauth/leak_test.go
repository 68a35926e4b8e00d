package metricsauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// TestTokenNeverShown checks that no response body and no log line (at
// the highest verbosity used) holds the caller's token, even when the API
// server's error message echoes it.
func TestTokenNeverShown(t *testing.T) {
	const secret = "s3cr3t-b3ar3r-t0k3n"
	for _, tc := range []struct {
		name       string
		user       string // the token's user; none: unknown token
		allowed    bool
		fail       bool
		wantStatus int
	}{
		{name: "unknown token", wantStatus: http.StatusUnauthorized},
		{name: "denied", user: "someone", wantStatus: http.StatusForbidden},
		{name: "allowed", user: "someone", allowed: true, wantStatus: http.StatusOK},
		{name: "API server fails and echoes the token", user: "someone", fail: true, wantStatus: http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPIServer()
			api.fail = tc.fail
			if tc.user != "" {
				api.users[secret] = authenticationv1.UserInfo{Username: tc.user}
			}
			api.allowed[tc.user+" get /metrics"] = tc.allowed
			var logs strings.Builder
			h := guarded(t, api, nil, &logs)
			status, body := scrape(t, h, http.MethodGet, "Bearer "+secret)
			type result struct {
				Status               int
				BodyHasToken, LogHas bool
			}
			want := result{Status: tc.wantStatus}
			got := result{status, strings.Contains(body, secret), strings.Contains(logs.String(), secret)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scrape (-want +got):\n%s\nbody: %s\nlogs:\n%s", diff, body, logs.String())
			}
		})
	}
}
