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
	body, err := cp.schedulerGet(ctx, "/metrics", 10*time.Second, 64<<20)
	if err != nil {
		return "", fmt.Errorf("read the scheduler's metrics: %w", err)
	}
	return string(body), nil
}

// SchedulerCPUProfile returns a CPU profile of kube-scheduler over the
// next seconds (its /debug/pprof, on by default: --profiling), read as
// SchedulerMetrics reads its metrics.
func (cp *ControlPlane) SchedulerCPUProfile(ctx context.Context, seconds int) ([]byte, error) {
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds)
	body, err := cp.schedulerGet(ctx, path, time.Duration(seconds+30)*time.Second, 256<<20)
	if err != nil {
		return nil, fmt.Errorf("read the scheduler's CPU profile: %w", err)
	}
	return body, nil
}

// schedulerGet reads path on the scheduler's secure port, at most limit
// bytes of it, within timeout.
func (cp *ControlPlane) schedulerGet(ctx context.Context, path string, timeout time.Duration, limit int64) ([]byte, error) {
	if cp.Scheduler == nil || cp.schedulerPort == 0 {
		return nil, errors.New("no kube-scheduler runs: start the control plane with Options.Scheduler")
	}
	tc, err := rest.TLSConfigFor(cp.Config)
	if err != nil {
		return nil, fmt.Errorf("the admin's TLS configuration: %w", err)
	}
	if tc == nil {
		return nil, errors.New("the admin's configuration has no TLS client credentials")
	}
	tc = tc.Clone()
	// The scheduler serves a self-signed certificate on loopback.
	tc.RootCAs, tc.InsecureSkipVerify = nil, true //nolint:gosec // loopback endpoints of a self-signed test server
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: tc}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", cp.schedulerPort, path), nil)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	if cp.Config.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+cp.Config.BearerToken)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	return body, nil
}
