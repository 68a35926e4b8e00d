package cluster

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"golang.org/x/sys/unix"
)

// MinFreeDisk is the free space the node's directory needs at the start:
// the suite's images, containers, etcd and logs grow it to about 700 MiB,
// the builds it runs add to Go's build cache, and the kubelet here evicts
// below 1% free (kubeletConfig's evictionHard).
const MinFreeDisk = 4 << 30

// CheckDisk fails when the file system holding dir has less than
// MinFreeDisk free: the kubelet would taint the node
// node.kubernetes.io/disk-pressure part way through and every pod created
// after that would stay Pending until a wait timed out.
func CheckDisk(dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	free := st.Bavail * uint64(st.Bsize)
	if free < MinFreeDisk {
		return fmt.Errorf("%s has %.1f GiB free of %.1f GiB; the real-node suite needs at least %d GiB "+
			"(images, containers, etcd), or the kubelet taints its node with disk-pressure and pods stay Pending: "+
			"free some space (for example `go clean -cache`, old build outputs under /tmp)",
			dir, gib(free), gib(st.Blocks*uint64(st.Bsize)), MinFreeDisk>>30)
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

// Pressure describes what keeps pods off the node: the conditions other
// than Ready that are True (DiskPressure, MemoryPressure, PIDPressure,
// NetworkUnavailable) and its taints, with the kubelet's messages. It is
// empty when there are none.
func (c *Cluster) Pressure(ctx context.Context) (string, error) {
	var node corev1.Node
	if err := c.Client.Get(ctx, client.ObjectKey{Name: c.NodeName}, &node); err != nil {
		return "", fmt.Errorf("read node %s: %w", c.NodeName, err)
	}
	return pressure(&node), nil
}

func pressure(node *corev1.Node) string {
	var parts []string
	for _, cond := range node.Status.Conditions {
		if cond.Type != corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("condition %s (%s: %s)", cond.Type, cond.Reason, cond.Message))
		}
	}
	for _, t := range node.Spec.Taints {
		parts = append(parts, fmt.Sprintf("taint %s:%s", t.Key, t.Effect))
	}
	if len(parts) == 0 {
		return ""
	}
	return "node " + node.Name + ": " + strings.Join(parts, "; ")
}
