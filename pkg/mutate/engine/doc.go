// Package engine is the decision of the isamatch admission webhook without
// Kubernetes I/O: a pod's ISA request (annotation isa.request or label
// ARCH), its emulation request (isa.qemu or QEMU), the platforms of its
// images and a [Snapshot] of the nodes by ISA group in, node affinity out.
// It imports only the standard library, pkg/isa, pkg/contract,
// pkg/sanitize and the core/v1 types, so that tools which explain or
// check a decision (isactl, kubectl isa, the audit) link no client.
//
// The entry point is [Matcher.Decide]; [ReadRequests] and [PodInput] read
// a pod's requests as the webhook does, [RequiredAffinity] is the affinity
// of a request alone. pkg/mutate, the admission adapter, resolves the
// images, calls Decide and writes the result into the pod
// ([MergeRequired], [NarrowRequired] for a gated pod, [SpreadConstraints]).
//
// # Required affinity
//
// Each image allows the platforms it is built for (the node needs any of
// them); the pod needs all of its images; a request narrows that further
// (the node needs one alternative). A platform without a variant only needs
// the architecture and is written with the kubelet's kubernetes.io/arch
// label, so nodes the labeler has not reached yet qualify; a variant
// (riscv64/rva23u64, amd64/v3) or a request is written with the isamatch
// labels through isa.Requirements. With isa.qemu the required terms are
// "emulates the request and runs the images natively" OR "runs the request
// natively" (the paper's QEMU flow; isa.request, when also set, is the
// native fallback); an image built for the emulated architecture runs
// through the emulator, so its need joins the emulated one (emualt.go).
// Such a pod gets the QEMU_CPU its emulating nodes record
// ([ChooseEmulator], emulator.go).
//
// The pod's own required terms are combined with ours as a cross product,
// which never widens them. Output terms that contradict themselves or that
// contain another output term are dropped (they add nothing to the OR),
// which makes a second admission produce exactly the first one's result.
// More than DefaultMaxRequiredTerms terms is denied ([MergeRequired]).
//
// An image platform with no variant and no label may still say what it
// needs through its entrypoint binary (ImageInfo.Inferred, read by the
// adapter): that ISA is then the platform's requirement, for pods that ask
// nothing themselves.
//
// # Preferred affinity and its weights
//
// The paper ranks nodes by (1) instruction affinity |request| / |node|,
// highest first, (2) the number of nodes of the same ISA, more first, (3)
// resource use. We group nodes by native ISA (label isa.isamatch.io/group),
// sort the groups that satisfy the request by (affinity, size) and emit one
// preferred term "group In [...]" per weight. Because every node has exactly
// one group label, a node matches at most one of these terms, and a node
// that joins later with a known ISA is ranked at once.
//
// The default scheduler profile adds, per node, NodeAffinity (the sum of
// matching preferred weights normalised to 0..100 by the best feasible node,
// plugin weight 2, so 0..200 points), NodeResourcesFit LeastAllocated and
// NodeResourcesBalancedAllocation (0..100 each, weight 1), TaintToleration
// (weight 3, equal on untainted nodes), ImageLocality, PodTopologySpread and
// InterPodAffinity. In ordinary loads two feasible nodes differ by at most
// about 100 points in everything but NodeAffinity (a near-empty node against
// a well-packed one).
//
// Tier weights are 100, 40, 16, 6, 2 (tiers beyond the fifth get no term).
// The best tier normalises to 200 points, the second to at most 80: the gap
// of 120 points exceeds the ~100 points a looser but emptier node can gain
// from resource scoring, so a best-fit node with room always wins. When no
// best-fit node is feasible, normalisation makes the best remaining tier
// worth 200 points. Within a tier the largest group gets the tier weight and
// each smaller size one point less, down to at most 5 below in the first
// tier (95: still 110 points above the second tier) and 2 below in the
// second (38), none in later ones. That size bonus is at most 10 points, so
// it orders equal-affinity groups when resources are about equal and lets
// resource scoring decide otherwise. The gaps between lower tiers (80 vs 32,
// 32 vs 12 points) are smaller than resource differences can be, so below
// the second tier the order is a preference, not a guarantee.
//
// With isa.qemu, nodes whose emulation capability satisfies it get a term of
// weight 100 and the native fallback tiers use 40, 16, 6, 2.
//
// A pod's own preferred terms are kept and count in the same normalisation
// (a user term of weight 50 on some nodes lowers the best tier's share); our
// tier terms from an earlier admission are recognised by their single
// "group In" requirement and replaced.
//
// A plain architecture (an image without a variant or label, and no
// request) is ranked as that architecture's base ISA (rv64i, x86-64, arm64):
// the paper's base-ISA tasks have the single module I, so the node with the
// fewest extensions fits best and richer nodes stay free for the tasks that
// need them. Affinities are compared within an architecture only (each is
// divided by the best of its architecture): a pod that runs on several
// architectures has a best fit in each, and the scheduler picks among them.
//
// # Denials
//
// A malformed request is denied with the annotation or label, the bad token
// and the grammar. A request no image can serve, or images without a common
// architecture, is denied naming the image and its platforms. An image
// whose platforms are unknown (ImageInfo.Err) is left out of the decision
// with a warning; with Input.Fallback a pod that asks no ISA itself then
// requires that architecture instead (see fallback.go). When no node of
// the snapshot satisfies the result the decision warns: nodes may join.
//
// Every decision has a readable line (Decision.Summary): request, image
// platforms, required alternatives with the number of matching nodes,
// tiers (weight, affinity, number of groups and nodes, what the first
// groups have beyond the request) and warnings, and its numbers for
// programs (Decision.Counts, pkg/contract).
//
// # Memo
//
// The ranking of a set of alternatives depends only on the inventory
// snapshot, and pods of one workload ask the same thing: [Matcher] remembers
// rankings per snapshot in one least-recently-used memo, bounded by entries
// and bytes. Benchmarks and their figures are in docs/benchmarks.md.
package engine
