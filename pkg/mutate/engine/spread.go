package engine

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Topology spread under the scheduler's default configuration.
//
// The stock kube-scheduler spreads the pods of a Service, ReplicaSet,
// StatefulSet or ReplicationController over hostnames (maxSkew 3) and zones
// (maxSkew 5) when a pod has no topologySpreadConstraints of its own
// (PodTopologySpread's system defaults, ScheduleAnyway). That score is worth
// up to 200 points, more than the 120 between the first two isamatch tiers:
// as replicas fill the best-fit nodes, an empty node of a worse tier wins.
// Managed clusters do not let users turn the defaults off.
//
// A pod's own constraints replace the defaults. To a pod that has none, the
// webhook writes one, ScheduleAnyway, whose topology key is the group domain
// label of its best-fit group (isa.GroupDomainLabel): only that group's
// nodes carry the key, each with its own value. For constraints a pod sets
// itself the scheduler ignores every node that lacks a topology key: such a
// node scores 0, the least a node with the key can score. So the spreading
// happens among the best-fit group's nodes (maxSkew 3, the default for
// hostnames), every node with the key outscores every node without it, and
// once the group is full no feasible node has the key and spreading gives
// every node the same 0, leaving the order to the tiers. The pods counted
// are the pod's siblings: a label selector matching the pod's labels, less
// the ones unique to one pod or one revision of a StatefulSet (the defaults
// count by the owner's selector, which has none of them). The selector
// names the values, not matchLabelKeys: the API server turns
// matchLabelKeys into selector expressions with the same values and stores
// both, which costs each pod more bytes than the labels themselves.
//
// The group is the paper's best fit: the highest instruction affinity, then
// the larger group (ranked[0]). Pods of a tier's smaller groups still get
// their tier weight, and take the pods the largest group has no room for.
//
// A gated pod's best group is not known when it is created, and its spread
// constraints cannot change later: it gets a constraint on a key no node
// carries (groupDomainNone), which turns the default spreading off for it
// and lets the tiers alone order the nodes. A pod with isa.qemu gets the
// same: its best nodes are the emulating ones, which share no group.
//
// Zones: when every node of the best-fit group carries a zone label
// (topology.kubernetes.io/zone) and they lie in two or more zones, a second
// constraint spreads the replicas over zones as the defaults do (maxSkew
// 5). A node must carry every key of a pod's own constraints to be scored,
// so the zones count only the best-fit group's nodes and every other node
// still scores 0: three replicas on a group of nodes in three zones land
// one per zone, and no zone's count draws a replica out of the group. A
// group with a node without a zone gets no zone constraint (that node would
// score 0 beside the others), and nor does a group in one zone (it would
// change nothing).

// spreadMaxSkew and zoneMaxSkew are the scheduler's default maxSkew for
// hostnames and zones.
const (
	spreadMaxSkew = 3
	zoneMaxSkew   = 5
)

// Spread is what a pod's replicas spread over: the nodes of Group (its
// best-fit group; "" for none), and with Zones also their zones.
type Spread struct {
	Group string
	Zones bool
}

// maxSpreadKeys bounds the labels a constraint counts siblings by.
const maxSpreadKeys = 16

// groupDomainNone is a topology key no node carries.
const groupDomainNone = isa.GroupDomainPrefix + "none"

// perPodLabels are label keys whose value differs between siblings: a
// StatefulSet's pod name, index and revision, an indexed Job's completion
// index, a DaemonSet's template generation.
var perPodLabels = []string{
	"statefulset.kubernetes.io/pod-name",
	"apps.kubernetes.io/pod-index",
	"controller-revision-hash",
	"batch.kubernetes.io/job-completion-index",
	"pod-template-generation",
}

// spreadOver is what a pod's replicas spread over: the best tier's largest
// group, none with isa.qemu or without native tiers, and the group's zones
// when spreadsZones.
func spreadOver(snap *Snapshot, qemu *isa.Request, runs []tierRun) Spread {
	if qemu != nil || len(runs) == 0 || len(runs[0].groups) == 0 {
		return Spread{}
	}
	best := runs[0].groups[0]
	for _, g := range runs[0].groups[1:] {
		if g.nodes > best.nodes || (g.nodes == best.nodes && g.g.ID < best.g.ID) {
			best = g
		}
	}
	return Spread{Group: best.g.ID, Zones: spreadsZones(snap, best.g.ID)}
}

// spreadsZones reports whether every node of the groups with ID id carries
// a zone label and they name two zones or more.
func spreadsZones(snap *Snapshot, id string) bool {
	first, several := "", false
	k, _ := slices.BinarySearchFunc(snap.Groups, id, func(g Group, id string) int { return strings.Compare(g.ID, id) })
	for ; k < len(snap.Groups) && snap.Groups[k].ID == id; k++ {
		for _, m := range snap.Groups[k].Members {
			z := m.Labels[corev1.LabelTopologyZone]
			switch {
			case z == "":
				return false
			case first == "":
				first = z
			case z != first:
				several = true
			}
		}
	}
	return several
}

// SpreadConstraints returns the constraints for a pod with labels whose
// decision spreads over s; gated pods get the neutral one.
// A pod without a label that siblings share gets none: no Service,
// ReplicaSet or StatefulSet can select it, so the default spreading never
// applies to it, and a constraint would make the scheduler count every pod
// of its namespace for nothing.
func SpreadConstraints(labels map[string]string, s Spread, gated bool) []corev1.TopologySpreadConstraint {
	key := isa.GroupDomainPrefix + s.Group
	if gated || s.Group == "" {
		key = groupDomainNone
	}
	var keys []string
	for k := range labels {
		if !slices.Contains(perPodLabels, k) && !isa.IsOwnedLabel(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	if len(keys) > maxSpreadKeys {
		keys = keys[:maxSpreadKeys]
	}
	siblings := make(map[string]string, len(keys))
	for _, k := range keys {
		siblings[k] = labels[k]
	}
	out := []corev1.TopologySpreadConstraint{{
		MaxSkew:           spreadMaxSkew,
		TopologyKey:       key,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: siblings},
	}}
	if s.Zones && key != groupDomainNone {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew:           zoneMaxSkew,
			TopologyKey:       corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: maps.Clone(siblings)},
		})
	}
	return out
}
