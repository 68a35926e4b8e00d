package rebalancecluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/testbed"
)

// CycleCounter is the rebalancer's counter of cycles run, labelled by
// what started them (trigger: start, timer, node_join, threshold).
const CycleCounter = "isamatch_rebalancer_cycles_total"

// ShippedProfilePolicy returns the policy of config/components/rebalance
// under repoRoot with only the profiles that enable plugin as a balance
// plugin, and nodeSelector (when not empty) as the policy's node selector:
// the plugin then sees only those nodes. args are set over the shipped
// arguments of plugin. It fails when no profile enables plugin.
func ShippedProfilePolicy(repoRoot, plugin, nodeSelector string, args map[string]any) ([]byte, error) {
	raw, err := readPolicy(repoRoot)
	if err != nil {
		return nil, err
	}
	var kept []any
	profiles, _ := raw["profiles"].([]any)
	for _, p := range profiles {
		pm, _ := p.(map[string]any)
		plugins, _ := pm["plugins"].(map[string]any)
		balance, _ := plugins["balance"].(map[string]any)
		enabled, _ := balance["enabled"].([]any)
		if !slices.Contains(enabled, any(plugin)) {
			continue
		}
		kept = append(kept, p)
		configs, _ := pm["pluginConfig"].([]any)
		for _, pc := range configs {
			pc, _ := pc.(map[string]any)
			if pc["name"] != plugin || len(args) == 0 {
				continue
			}
			a, _ := pc["args"].(map[string]any)
			if a == nil {
				a = map[string]any{}
				pc["args"] = a
			}
			for k, v := range args {
				a[k] = v
			}
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s has no profile that enables the balance plugin %s", PolicyFile, plugin)
	}
	raw["profiles"] = kept
	if nodeSelector != "" {
		raw["nodeSelector"] = nodeSelector
	}
	out, err := yaml.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	return out, nil
}

// ProfilePolicy writes ShippedProfilePolicy(plugin, nodeSelector, args)
// into the cluster's directory as name and returns its path.
func (c *Cluster) ProfilePolicy(name, plugin, nodeSelector string, args map[string]any) (string, error) {
	data, err := ShippedProfilePolicy(c.RepoRoot, plugin, nodeSelector, args)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write policy: %w", err)
	}
	return path, nil
}

// Rebalancer is a long-running rebalancer process.
type Rebalancer struct {
	*testbed.Process
	port int
}

// StartRebalancer starts the rebalancer as the Deployment runs it: leader
// election on (the Lease named name in namespace leaseNamespace), a cycle
// every interval, plus extraArgs; its log is rebalancer-<name>.log in the
// cluster's directory. It returns once /healthz answers.
func (c *Cluster) StartRebalancer(ctx context.Context, policy, name, leaseNamespace string, interval time.Duration, extraArgs ...string) (*Rebalancer, error) {
	return StartRebalancer(ctx, RebalancerOptions{
		Bin: c.RebalancerBin, Kubeconfig: c.CP.KubeconfigPath, Policy: policy, Name: name, Dir: c.Dir, Interval: interval,
		Args: append([]string{"--leader-elect=true", "--leader-elect-resource-namespace=" + leaseNamespace, "--leader-elect-resource-name=" + name}, extraArgs...),
	})
}

// RebalancerOptions configures StartRebalancer.
type RebalancerOptions struct {
	// Bin is the rebalancer binary, Kubeconfig the cluster's.
	Bin, Kubeconfig string
	// Policy is the policy file; Name names the process and its log
	// rebalancer-<Name>.log in Dir.
	Policy, Name, Dir string
	// Interval is --descheduling-interval.
	Interval time.Duration
	// Args are further flags.
	Args []string
}

// StartRebalancer starts a long-running rebalancer on a free port and
// returns once /healthz answers.
func StartRebalancer(ctx context.Context, o RebalancerOptions) (*Rebalancer, error) {
	var r *Rebalancer
	err := testbed.StartOnFreePorts(1, func(ports []int) error {
		args := append([]string{
			"--kubeconfig=" + o.Kubeconfig,
			"--policy-config-file=" + o.Policy,
			"--descheduling-interval=" + o.Interval.String(),
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--v=1",
		}, o.Args...)
		p, err := testbed.StartProcess("rebalancer-"+o.Name, o.Bin, args, nil, filepath.Join(o.Dir, "rebalancer-"+o.Name+".log"))
		if err != nil {
			return err
		}
		err = p.WaitHTTP(ctx, "https://127.0.0.1:"+strconv.Itoa(ports[0])+"/healthz", nil, time.Minute,
			func(status int) bool { return status == http.StatusOK })
		if err != nil {
			_ = p.Stop(10 * time.Second)
			return err
		}
		r = &Rebalancer{Process: p, port: ports[0]}
		return nil
	})
	return r, err
}

// Cycles returns the cycles the rebalancer has finished, by what started
// them (CycleCounter).
func (r *Rebalancer) Cycles(ctx context.Context) (map[string]int, error) {
	body, err := r.scrape(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, t := range []string{"start", "timer", "node_join", "threshold"} {
		v, found, err := testbed.MetricValue(body, CycleCounter, map[string]string{"trigger": t})
		if err != nil {
			return nil, err
		}
		if found {
			out[t] = int(v)
		}
	}
	return out, nil
}

// Metric returns the value of the rebalancer's metric name with labels,
// and whether it is there.
func (r *Rebalancer) Metric(ctx context.Context, name string, labels map[string]string) (float64, bool, error) {
	body, err := r.scrape(ctx)
	if err != nil {
		return 0, false, err
	}
	return testbed.MetricValue(body, name, labels)
}

// scrape reads the rebalancer's /metrics.
func (r *Rebalancer) scrape(ctx context.Context) (string, error) {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback metrics of a self-signed test server
	}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(r.port)+"/metrics", nil)
	if err != nil {
		return "", fmt.Errorf("build metrics request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("read rebalancer metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("read rebalancer metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("rebalancer metrics: status %d", resp.StatusCode)
	}
	return string(body), nil
}
