package framework

import (
	"context"
	"errors"
	"os"

	"github.com/onsi/ginkgo/v2"

	"github.com/isamatch/isamatch/internal/testbed"
)

// InCI reports whether the run is CI's (CI=true), where a missing tool is a
// failure rather than a reason to skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireRegistry starts a registry for a ginkgo suite and registers its
// Stop with DeferCleanup. When docker-registry is not installed it skips
// the calling node with a message naming the apt package, except in CI
// (CI=true), where it fails.
func RequireRegistry(ctx context.Context, opts testbed.RegistryOptions) *testbed.Registry {
	ginkgo.GinkgoHelper()
	reg, err := testbed.StartRegistry(ctx, opts)
	if errors.Is(err, testbed.ErrRegistryBinaryMissing) && !InCI() {
		ginkgo.Skip("needs Debian's docker-registry: apt-get install " + testbed.RegistryPackage + " (CI=true makes this a failure)")
	}
	if err != nil {
		ginkgo.Fail("start docker-registry: " + err.Error())
	}
	ginkgo.DeferCleanup(reg.Stop)
	return reg
}

// ReportLogsOnFailure attaches the tail of the scheduler's log to the
// current spec's report when it failed. Call it from an AfterEach.
func ReportLogsOnFailure(cp *testbed.ControlPlane, lines int) {
	if cp == nil || cp.Scheduler == nil || !ginkgo.CurrentSpecReport().Failed() {
		return
	}
	ginkgo.AddReportEntry("kube-scheduler log", cp.SchedulerLogTail(lines))
}
