package e2e

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/test/framework"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "isamatch end-to-end suite")
}

// startCluster brings a democluster up for the calling container and tears
// it down after. Without docker-registry it skips (fails in CI).
func startCluster(ctx context.Context, opts democluster.Options) *democluster.Cluster {
	GinkgoHelper()
	if _, err := testbed.AssetsDir(); err != nil {
		Fail(err.Error())
	}
	opts.Progress = GinkgoWriter
	c, err := democluster.Start(ctx, opts)
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) && !framework.InCI() {
		Skip("needs Debian's docker-registry: apt-get install " + testbed.RegistryPackage + " (CI=true makes this a failure)")
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(c.Stop()).To(Succeed()) })
	return c
}
