package rebalancecluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// PolicyFile is the shipped rebalancer policy, relative to the repository
// root.
var PolicyFile = filepath.Join("config", "components", "rebalance", "policy.yaml")

// cycleTimeout bounds one rebalancer run.
const cycleTimeout = 3 * time.Minute

// ShippedPolicy returns the policy of config/components/rebalance under
// repoRoot with the ISAFit plugin's arguments in isaFitArgs set over the
// shipped ones; everything else, the evictor and the disruption wait
// included, is as shipped. It fails when the policy configures no ISAFit.
func ShippedPolicy(repoRoot string, isaFitArgs map[string]any) ([]byte, error) {
	raw, err := readPolicy(repoRoot)
	if err != nil {
		return nil, err
	}
	found := false
	profiles, _ := raw["profiles"].([]any)
	for _, p := range profiles {
		pm, _ := p.(map[string]any)
		configs, _ := pm["pluginConfig"].([]any)
		for _, pc := range configs {
			pc, _ := pc.(map[string]any)
			if pc["name"] != "ISAFit" {
				continue
			}
			args, _ := pc["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				pc["args"] = args
			}
			for k, v := range isaFitArgs {
				args[k] = v
			}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s configures no ISAFit plugin: a profile's pluginConfig needs an entry named ISAFit", PolicyFile)
	}
	out, err := yaml.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	return out, nil
}

// Policy writes ShippedPolicy(isaFitArgs) into the cluster's directory as
// name and returns its path.
func (c *Cluster) Policy(name string, isaFitArgs map[string]any) (string, error) {
	data, err := ShippedPolicy(c.RepoRoot, isaFitArgs)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write policy: %w", err)
	}
	return path, nil
}

// RunCycle runs the rebalancer once with the policy file
// (--descheduling-interval=0: one cycle, then exit), its output in the
// cluster's directory as rebalancer-<name>.log, and returns how long it
// took and the log's path.
func (c *Cluster) RunCycle(ctx context.Context, policy, name string) (took time.Duration, log string, err error) {
	log = filepath.Join(c.Dir, "rebalancer-"+name+".log")
	f, err := os.Create(log)
	if err != nil {
		return 0, log, fmt.Errorf("create rebalancer log: %w", err)
	}
	defer f.Close()
	cctx, cancel := context.WithTimeout(ctx, cycleTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, c.RebalancerBin,
		"--kubeconfig="+c.CP.KubeconfigPath,
		"--policy-config-file="+policy,
		"--descheduling-interval=0",
		"--secure-port=0",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = f, f
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start)
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return took, log, fmt.Errorf("rebalancer cycle %s did not end within %s (log %s)", name, cycleTimeout, log)
	}
	if err != nil {
		return took, log, fmt.Errorf("rebalancer cycle %s: %w (log %s)", name, err, log)
	}
	return took, log, nil
}

// readPolicy parses the shipped policy file under repoRoot.
func readPolicy(repoRoot string) (map[string]any, error) {
	path := filepath.Join(repoRoot, PolicyFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return raw, nil
}
