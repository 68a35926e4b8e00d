// Package usage reads what nodes and pods really use, for the rebalancer's
// WeightedLoad plugin: CPU and memory from the Metrics API
// (metrics.k8s.io, served by metrics-server), network and disk IO from
// Prometheus through descheduler's Prometheus client and its node query
// function. Its entry point is [Reader.Read], which returns a [Snapshot]
// of one moment: what each source answered, and which dimensions it could
// not read and why. Requests are the caller's fallback: a node or pod the
// snapshot has no value for is judged by what it requests.
package usage
