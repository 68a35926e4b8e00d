package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// SchedulerMetrics returns kube-scheduler's /metrics, read on its secure
// port with the admin's credentials: its default authorization lets only
// the API server's authorised users read it.
func (cp *ControlPlane) SchedulerMetrics(ctx context.Context) (string, error) {
	if cp.Scheduler == nil || cp.schedulerPort == 0 {
		return "", errors.New("no kube-scheduler runs: start the control plane with Options.Scheduler")
	}
	tc, err := rest.TLSConfigFor(cp.Config)
	if err != nil {
		return "", fmt.Errorf("the admin's TLS configuration: %w", err)
	}
	if tc == nil {
		return "", errors.New("the admin's configuration has no TLS client credentials")
	}
	tc = tc.Clone()
	// The scheduler serves a self-signed certificate on loopback.
	tc.RootCAs, tc.InsecureSkipVerify = nil, true //nolint:gosec // loopback metrics of a self-signed test server
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", cp.schedulerPort), nil)
	if err != nil {
		return "", fmt.Errorf("build the scheduler's metrics request: %w", err)
	}
	if cp.Config.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+cp.Config.BearerToken)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("read the scheduler's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", fmt.Errorf("read the scheduler's metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the scheduler's metrics: status %s", resp.Status)
	}
	return string(body), nil
}
