// Package framework is the ginkgo glue of the isamatch integration and
// end-to-end suites over internal/testbed, which starts the control plane,
// scheduler, registry and simulated nodes: RequireRegistry starts a registry
// for a suite or skips when docker-registry is not installed, and
// ReportLogsOnFailure attaches the scheduler's log to a failed spec.
//
// Only suites import it: binaries use internal/testbed directly and so never
// link ginkgo or gomega.
package framework
