package inventory

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// Inventory tracks nodes by ISA group. The zero value is not usable; use
// [New] or [NewStatic].
type Inventory struct {
	mu     sync.Mutex
	nodes  map[string]nodeState
	groups map[string]*groupState // by groupKey
	parsed map[string]parsedLabels
	arches map[string]int
	snap   atomic.Pointer[engine.Snapshot]
	synced func() bool
}

type nodeState struct {
	fingerprint string // owned labels, canonical; "" when unlabelled
	group       string // groupKey; "" when unlabelled
	arch        string
	labels      map[string]string
}

type groupState struct {
	group   engine.Group
	key     string
	members map[string]map[string]string // node name -> labels
}

// maxParsed bounds the memo of parsed label sets (distinct ISA label sets
// seen; a cluster has a few hundred at most).
const maxParsed = 4096

type parsedLabels struct {
	// fingerprint is the memo's key, kept so that every node with this
	// label set shares one copy of it (a few hundred bytes per node).
	fingerprint string
	key         string // "" when NodeFromLabels found nothing
	native      isa.ISA
	emulated    []isa.ISA
	executes    []isa.Arch
}

func newInventory() *Inventory {
	i := &Inventory{
		nodes:  map[string]nodeState{},
		groups: map[string]*groupState{},
		parsed: map[string]parsedLabels{},
		arches: map[string]int{},
		synced: func() bool { return true },
	}
	i.snap.Store(&engine.Snapshot{ArchNodes: map[string]int{}})
	return i
}

// New returns an empty inventory that its caller feeds with Set and Delete
// as node events arrive (package pkg/inventory/informer feeds one from a
// manager's Node informer). HasSynced reports synced(): whether the feed
// has delivered the initial node list; nil means always.
func New(synced func() bool) *Inventory {
	i := newInventory()
	if synced != nil {
		i.synced = synced
	}
	return i
}

// NewStatic returns an inventory of a fixed set of nodes (name -> labels),
// for tests and benchmarks.
func NewStatic(nodes map[string]map[string]string) *Inventory {
	i := newInventory()
	i.mu.Lock()
	defer i.mu.Unlock()
	for name, labels := range nodes {
		i.setLocked(name, labels)
	}
	i.publishLocked()
	return i
}

// HasSynced reports whether the inventory has seen the initial node list
// (always true for a static inventory).
func (i *Inventory) HasSynced() bool { return i.synced() }

// Snapshot returns the current view. It never blocks on updates.
func (i *Inventory) Snapshot() *engine.Snapshot { return i.snap.Load() }

// Set records a node's labels (add or update).
func (i *Inventory) Set(name string, labels map[string]string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.setLocked(name, labels) {
		i.publishLocked()
	}
}

// Delete forgets a node.
func (i *Inventory) Delete(name string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.deleteLocked(name) {
		i.publishLocked()
	}
}

// setLocked reports whether the snapshot must change.
func (i *Inventory) setLocked(name string, labels map[string]string) bool {
	fp := fingerprint(labels)
	arch := labels[isa.KubeArchLabel]
	old, existed := i.nodes[name]
	if existed && old.fingerprint == fp && old.arch == arch {
		if maps.Equal(old.labels, labels) {
			return false // a status update: the labels are the same
		}
		// Labels isamatch does not own changed: a group member's count
		// for pods that select by them.
		old.labels = labels
		i.nodes[name] = old
		if old.group != "" {
			i.groups[old.group].members[name] = labels
		}
		return old.group != ""
	}
	if existed {
		i.deleteLocked(name)
	}
	st := nodeState{fingerprint: fp, arch: arch, labels: labels}
	if fp != "" {
		p, ok := i.parsed[fp]
		if !ok {
			p = parse(labels)
			p.fingerprint = fp
			if len(i.parsed) >= maxParsed {
				clear(i.parsed)
			}
			i.parsed[fp] = p
		}
		st.fingerprint = p.fingerprint
		if p.key != "" {
			g := i.groups[p.key]
			if g == nil {
				g = &groupState{key: p.key, members: map[string]map[string]string{}, group: engine.Group{
					ID: isa.GroupID(p.native), Native: p.native, Emulated: p.emulated, Executes: p.executes, Name: p.native.Short(),
				}}
				i.groups[p.key] = g
			}
			g.group.Nodes++
			g.members[name] = labels
			st.group = p.key
		}
	}
	i.arches[arch]++
	i.nodes[name] = st
	return true
}

func (i *Inventory) deleteLocked(name string) bool {
	st, ok := i.nodes[name]
	if !ok {
		return false
	}
	delete(i.nodes, name)
	if i.arches[st.arch]--; i.arches[st.arch] <= 0 {
		delete(i.arches, st.arch)
	}
	if st.group != "" {
		g := i.groups[st.group]
		delete(g.members, name)
		if g.group.Nodes--; g.group.Nodes <= 0 {
			delete(i.groups, st.group)
		}
	}
	return true
}

func (i *Inventory) publishLocked() {
	s := &engine.Snapshot{
		Groups:    make([]engine.Group, 0, len(i.groups)),
		ArchNodes: make(map[string]int, len(i.arches)),
		Nodes:     len(i.nodes),
	}
	keys := make([]string, 0, len(i.groups))
	for k := range i.groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := i.groups[k]
		grp := g.group
		grp.Members = make([]engine.Member, 0, len(g.members))
		for _, n := range slices.Sorted(maps.Keys(g.members)) {
			grp.Members = append(grp.Members, engine.Member{Name: n, Labels: g.members[n]})
		}
		s.Groups = append(s.Groups, grp)
	}
	for a, n := range i.arches {
		if a != "" {
			s.ArchNodes[a] = n
		}
	}
	i.snap.Store(s)
}

// fingerprint is the canonical text of a node's isamatch-owned labels; ""
// when it has none. The group domain label names the node, not its ISA:
// it is left out, so the nodes of one group share a fingerprint and its
// parsed labels.
func fingerprint(labels map[string]string) string {
	var owned []string
	for k, v := range labels {
		if isa.IsOwnedLabel(k) && !isa.IsGroupDomainLabel(k) {
			owned = append(owned, k+"="+v)
		}
	}
	if len(owned) == 0 {
		return ""
	}
	slices.Sort(owned)
	return strings.Join(owned, "\n")
}

func parse(labels map[string]string) parsedLabels {
	native, emulated, ok := isa.NodeFromLabels(labels)
	if !ok {
		return parsedLabels{}
	}
	var b strings.Builder
	b.WriteString(isa.GroupID(native))
	b.WriteString("/")
	b.WriteString(native.String())
	for _, e := range emulated {
		b.WriteString("/")
		b.WriteString(e.String())
	}
	executes := isa.ExecutedFromLabels(labels)
	for _, a := range executes {
		b.WriteString("/exec:")
		b.WriteString(string(a))
	}
	return parsedLabels{key: b.String(), native: native, emulated: emulated, executes: executes}
}
