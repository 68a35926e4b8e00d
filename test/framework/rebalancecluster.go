package framework

import (
	"context"
	"errors"

	"github.com/onsi/ginkgo/v2"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/internal/testbed"
)

// StartControllerCluster starts a rebalancecluster (control plane,
// kube-controller-manager, the webhook and a registry) for a ginkgo suite
// with o's nodes, namespace and image, in the suite's temporary directory,
// and registers its Stop, with the components' log tails when a spec
// failed. Without kube-controller-manager (ISAMATCH_NODE_ASSETS) or
// docker-registry it skips, except in CI (CI=true), where it fails.
func StartControllerCluster(ctx context.Context, o rebalancecluster.Options) *rebalancecluster.Cluster {
	ginkgo.GinkgoHelper()
	nodeAssets, err := rebalancecluster.NodeAssetsDir()
	if errors.Is(err, rebalancecluster.ErrNodeAssetsMissing) && !InCI() {
		ginkgo.Skip(err.Error())
	}
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	o.NodeAssets, o.Dir, o.Progress = nodeAssets, ginkgo.GinkgoT().TempDir(), ginkgo.GinkgoWriter
	cluster, err := rebalancecluster.Start(ctx, o)
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) && !InCI() {
		ginkgo.Skip("needs Debian's docker-registry: apt-get install " + testbed.RegistryPackage + " (CI=true makes this a failure)")
	}
	if err != nil {
		ginkgo.Fail("start the cluster: " + err.Error())
	}
	ginkgo.DeferCleanup(func() {
		if ginkgo.CurrentSpecReport().Failed() {
			ginkgo.AddReportEntry("kube-scheduler, kube-controller-manager and webhook logs", cluster.LogTails(40))
		}
		if err := cluster.Stop(); err != nil {
			ginkgo.Fail("stop the cluster: " + err.Error())
		}
	})
	return cluster
}
