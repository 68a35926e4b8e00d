package rebalancecluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/isamatch/isamatch/internal/testbed"
)

// NodeAssetsEnv names the directory of `hack/controlplane.sh node`, which
// holds kube-controller-manager.
const NodeAssetsEnv = "ISAMATCH_NODE_ASSETS"

// ErrNodeAssetsMissing says NodeAssetsEnv is not set.
var ErrNodeAssetsMissing = errors.New(NodeAssetsEnv + " is not set (kube-controller-manager): run `make test` or `make demo`, or export " +
	NodeAssetsEnv + "=\"$(hack/controlplane.sh node)\"")

// NodeAssetsDir returns the NodeAssetsEnv directory after checking that it
// holds an executable kube-controller-manager.
func NodeAssetsDir() (string, error) {
	dir := os.Getenv(NodeAssetsEnv)
	if dir == "" {
		return "", ErrNodeAssetsMissing
	}
	path := filepath.Join(dir, "kube-controller-manager")
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s has no executable kube-controller-manager: rerun hack/controlplane.sh node", NodeAssetsEnv, dir)
	}
	return dir, nil
}

// startControllerManager runs kube-controller-manager as an admin with the
// controllers the rebalancer's cluster needs: Deployments, ReplicaSets,
// StatefulSets and Jobs recreate evicted pods, the disruption controller keeps
// PodDisruptionBudgets' status that the Eviction API enforces. Node
// lifecycle is left out: the simulated nodes post no heartbeats and would
// turn NotReady. It waits up to a minute until /healthz answers 200.
func (c *Cluster) startControllerManager(ctx context.Context, bin string) error {
	c.OnStop(func() error {
		if c.ControllerManager == nil {
			return nil
		}
		return c.ControllerManager.Stop(10 * time.Second)
	})
	return testbed.StartOnFreePorts(1, func(ports []int) error {
		p, err := testbed.StartProcess("kube-controller-manager", bin, []string{
			"--kubeconfig=" + c.CP.KubeconfigPath,
			"--authentication-kubeconfig=" + c.CP.KubeconfigPath,
			"--authorization-kubeconfig=" + c.CP.KubeconfigPath,
			"--controllers=deployment-controller,replicaset-controller,statefulset-controller,job-controller,disruption-controller",
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + filepath.Join(c.Dir, "kcm-certs"),
		}, nil, filepath.Join(c.Dir, "kube-controller-manager.log"))
		if err != nil {
			return err
		}
		c.ControllerManager = p
		err = p.WaitHTTP(ctx, "https://127.0.0.1:"+strconv.Itoa(ports[0])+"/healthz", nil, time.Minute,
			func(status int) bool { return status == 200 })
		if testbed.PortTaken(err) {
			_ = p.Stop(10 * time.Second)
			c.ControllerManager = nil
		}
		return err
	})
}
