// Package isafit is the isamatch descheduler plugin ISAFit: a Balance
// plugin that moves a pod to a node of a better isamatch tier once such a
// node has room. Its entry point is [Register], which adds it to a
// descheduler plugin registry; [New] builds it from [ISAFitArgs].
//
// The isamatch webhook writes the pod's tiers as preferred node affinity:
// one term "isa.isamatch.io/group In [...]" per tier, weights 100, 40, 16,
// 6, 2 from the best fit down (within a tier a smaller group gets up to 5
// points less); with isa.qemu, one more term of weight 100 for the nodes
// that emulate the ISA, the native tiers being the fallback at 40, 16, 6,
// 2. The scheduler honours them when the pod is placed; when the
// best-fit nodes were full, the pod runs on a richer node and stays there.
// ISAFit reads those terms on every candidate pod, computes the weight they
// give its current node and every other node (tier plus emulation, as the
// scheduler adds them), and evicts the pod only when
// a node whose weight is at least MinWeightGain higher passes descheduler's
// full fit check (schedulable, node selector and required node affinity,
// NoSchedule/NoExecute taints, inter-pod anti-affinity, and requests
// against the pods already there plus the pods this plugin moved there
// whose replacements are not bound yet).
//
// Limits: MaxEvictionsPerCycle and MaxEvictionsPerNode per cycle, on top of
// descheduler's own. Hysteresis: a pod younger than MinPodAge is never
// moved, and a moved pod returns as a new pod, so it cannot bounce sooner;
// a move needs a strictly better tier, never a larger group of the same
// tier. Evictions go through descheduler's evictor and the Eviction API,
// so PodDisruptionBudgets hold; with DisruptionWait a cycle waits for a
// budget to allow the next eviction instead of leaving it to the next
// cycle.
package isafit
