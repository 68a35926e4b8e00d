// Package scanner runs the audit (package audit) on the webhook's elected
// leader: every interval, over the scheduled pods of the misplacement
// informer (package pkg/misplace/watch), the nodes' metadata in the
// manager's cache and the webhook's selectors, and exports what it finds
// as gauges: isamatch_misplaced_pods{reason}, the node inventory
// (isamatch_nodes{arch,labelled}, isamatch_isa_groups) and the pods still
// gated past the gate's bound (isamatch_gated_pods_overdue).
//
// The entry point is [Setup], which adds a [Scanner] to a
// controller-runtime manager; [NewMetrics] makes its gauges.
package scanner
