// Package weightedload is the isamatch descheduler plugin WeightedLoad: a
// Balance plugin that moves pods off nodes whose requested CPU or memory
// share is above the cluster's size-weighted average. Its entry point is
// [Register]; [New] builds it from [WeightedLoadArgs].
//
// The cluster average of a resource is the sum of the pods' requests over
// the sum of the nodes' allocatable, so a bigger node counts for more. A
// node's score per resource is the average minus its own share: positive
// is better than average, negative worse. The nodes whose CPU or memory
// score is below -Tolerance form the high-load queue, worst first; a node
// whose CPU share is above HighThreshold goes to its head. From each node
// in turn the plugin evicts until the node is back within Tolerance of the
// average: never a pod with restartPolicy Never, never a pod with local
// storage or without requests, OnFailure pods before Always ones, and
// Burstable before Guaranteed; and only a pod that a node below the
// average can take (descheduler's fit check) without going above the
// average itself, and that is of an isamatch tier there at least as good
// as where it runs. That last rule keeps WeightedLoad from undoing what
// ISAFit did. The scheduler places the replacement pod.
//
// Load is what pods request, not what they use (descheduler's
// LowNodeUtilization can read metrics; this plugin does not). A node
// joining or crossing HighThreshold starts a cycle at once only through the
// rebalancer's triggers (package trigger); the plugin itself acts when a
// cycle runs.
package weightedload
