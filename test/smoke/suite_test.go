package smoke

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/test/framework"
)

func TestSmoke(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "Harness smoke suite")
}

var cp *testbed.ControlPlane

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	cp, err = testbed.Start(ctx, testbed.Options{Scheduler: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(cp.Stop()).To(Succeed())
	})
}, NodeTimeout(3*time.Minute))

var _ = AfterEach(func() {
	framework.ReportLogsOnFailure(cp, 60)
})
