package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// profileWebhook takes CPU profiles while admission batches run: of the
// API server without the webhook (apiserver-cpu-without.pprof), then of the
// webhook and the API server with it (webhook-cpu.pprof,
// apiserver-cpu-with.pprof), and an allocation profile of the webhook
// after, into o.ProfileDir.
func profileWebhook(ctx context.Context, e *Env, o Options) error {
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.ProfileDir, err)
	}
	const seconds = 10
	for _, with := range []bool{false, true} {
		var profiles []func() error
		if with {
			profiles = append(profiles, func() error {
				return fetch(ctx, e, fmt.Sprintf("profile?seconds=%d", seconds), filepath.Join(o.ProfileDir, "webhook-cpu.pprof"))
			})
		}
		name := "apiserver-cpu-without.pprof"
		if with {
			name = "apiserver-cpu-with.pprof"
		}
		profiles = append(profiles, func() error {
			return fetchAPIServer(ctx, e, seconds, filepath.Join(o.ProfileDir, name))
		})
		done := make(chan error, len(profiles))
		for _, p := range profiles {
			go func() { done <- p() }()
		}
		h := hookOf(with)
		ns := nsName("adm", h)
		deadline := time.Now().Add(seconds * time.Second)
		for b := 0; time.Now().Before(deadline); b++ {
			if _, err := admissionPhase(ctx, e, o, ns, h, fmt.Sprintf("prof%d", b)); err != nil {
				return err
			}
		}
		for range profiles {
			if err := <-done; err != nil {
				return err
			}
		}
	}
	return fetch(ctx, e, "allocs", filepath.Join(o.ProfileDir, "webhook-allocs.pprof"))
}

// fetchAPIServer writes a CPU profile of the API server (its
// /debug/pprof, on by default) to path.
func fetchAPIServer(ctx context.Context, e *Env, seconds int, path string) error {
	raw, err := e.Clientset.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("fetch the API server's CPU profile: %w", err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// schedProfileSeconds is how long the scheduler is profiled from the first
// release of a kind's pods: less than the 1,000 pods take to bind at the
// rates measured here, so the profile is the scheduler at work.
const schedProfileSeconds = 4

// profileScheduler writes a CPU profile of kube-scheduler while it places
// pods of kind k (scheduler-cpu-<kind>.pprof) to o.ProfileDir.
func profileScheduler(ctx context.Context, e *Env, o Options, k schedKind) error {
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.ProfileDir, err)
	}
	raw, err := e.CP.SchedulerCPUProfile(ctx, schedProfileSeconds)
	if err != nil {
		return err
	}
	path := filepath.Join(o.ProfileDir, fmt.Sprintf("scheduler-cpu-%s.pprof", k))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fetch(ctx context.Context, e *Env, what, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.PprofAddr+"/debug/pprof/"+what, nil)
	if err != nil {
		return fmt.Errorf("build pprof request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: status %s", what, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
