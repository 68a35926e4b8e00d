package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/isamatch/isamatch/internal/testbed"
)

// componentPorts is how many ports the components listen on: etcd's
// client and peer, kube-apiserver, kube-controller-manager,
// kube-scheduler, the kubelet and its healthz, kube-proxy's healthz and
// metrics.
const componentPorts = 9

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd, the kubelet and kube-proxy, and waits until
// the node is Ready. ctx bounds the start-up. On error everything started
// is stopped again. The components' ports are picked before they start
// (they are written into configuration files): when another process took
// one in the meantime (a component's log says "address already in use"),
// everything is stopped and started again on fresh ports
// (testbed.StartOnFreePorts).
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	err = testbed.StartOnFreePorts(componentPorts, func(ports []int) error {
		// etcd's data of an attempt that failed (kept with
		// ISAMATCH_KEEP_TMP) names the old peer port.
		if err := os.RemoveAll(filepath.Join(opts.Dir, "etcd")); err != nil {
			return fmt.Errorf("remove etcd's data of an earlier attempt: %w", err)
		}
		var err error
		c, err = start(ctx, opts, ports)
		return err
	})
	return c, err
}
