// Package weightedload is the isamatch descheduler plugin WeightedLoad: a
// Balance plugin that moves pods off nodes loaded above the cluster's
// size-weighted average. Its entry point is [Register]; [New] and
// [Builder] build it from [WeightedLoadArgs].
//
// Load is what nodes and pods use (args usage: metrics; read each cycle
// through package usage: the Metrics API for CPU and memory, Prometheus
// for network and disk IO) with what pods request where nothing was
// measured, or what pods request alone (usage: requests). Per node and
// dimension a share is the use over the capacity; the node's load is the
// design source's formula, the weighted mean of its shares (model.go),
// and the cluster's average of a dimension is the sum of the use over the
// sum of the capacity, so a bigger node counts for more. A node joins the
// high-load queue when a dimension is above the average by more than
// Tolerance, plus Hysteresis for measured values; the queue is ordered by
// load, nodes above HighThreshold of CPU first. From each node in turn the
// plugin evicts until it is back within Tolerance: never a pod with
// restartPolicy Never, never a pod with local storage or without
// requests, OnFailure pods before Always ones, Burstable before
// Guaranteed, at most the namespace's eviction budget; and only a pod
// that a node can take without going above the cluster's load (and
// descheduler's fit check passes) and that is of an isamatch tier there at
// least as good as where it runs. That last rule keeps WeightedLoad from
// undoing what ISAFit did. The scheduler places the replacement pod. Each
// cycle's measurements, the balance index included, go to the Observer.
//
// A node joining or crossing HighThreshold starts a cycle at once only
// through the rebalancer's triggers (package trigger); the plugin itself
// acts when a cycle runs.
package weightedload
