package e2e

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// randomImages are the multi-arch images the randomized pods use.
var randomImages = []experiment.Image{
	{Repo: "rand/multi", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "riscv64"}}},
	{Repo: "rand/riscv", Tag: "v1", Platforms: []experiment.Platform{{OS: "linux", Architecture: "riscv64"}}},
	{Repo: "rand/x86-v3", Tag: "v1", Platforms: []experiment.Platform{{OS: "linux", Architecture: "amd64", Variant: "v3"}}},
	{Repo: "rand/variants", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "amd64", Variant: "v2"}, {OS: "linux", Architecture: "arm64", Variant: "v8.2"},
		{OS: "linux", Architecture: "riscv64", Variant: "rva22u64"}}},
	{Repo: "rand/rva23", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}, {OS: "linux", Architecture: "amd64", Variant: "v4"}}},
	{Repo: "rand/rvv-label", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "riscv64", Labels: map[string]string{isa.BareImageRequestLabel: "rv64gcv"}}}},
	{Repo: "rand/thead-label", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "riscv64", Labels: map[string]string{isa.BareImageRequestLabel: "rv64gc_xtheadvector"}}}},
	{Repo: "rand/cross", Tag: "v1", Platforms: []experiment.Platform{
		{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "riscv64"}}},
}

// image returns the random image named repo.
func image(repo string) experiment.Image {
	i := slices.IndexFunc(randomImages, func(im experiment.Image) bool { return im.Repo == repo })
	if i < 0 {
		panic("no random image " + repo)
	}
	return randomImages[i]
}

// Requests the randomized pods write in isa.request and isa.qemu.
var (
	randomRequests = []string{
		"rv64gc", "rv64gcv", "rva22u64", "rva23u64", "rv64imfd", "rv64imfdv", "rv64imfv",
		"x86-64-v2", "x86-64-v3", "x86-64-v4", "arm64", "arm64+sve",
		"rv64gcv | x86-64-v3", "rva23u64 | x86-64-v4 | arm64+sve", "rv64imfd | arm64",
		"rv64gc_xtheadvector | rv64gcv", "x86-64-v3 | arm64+sve",
	}
	randomQEMU = []string{"rv64imfdv", "rv64gcv", "rv64gc"}
	zones      = []string{"zone-a", "zone-b", "zone-c"}
)

// zoneLabel is the topology label user-written affinity refers to.
const zoneLabel = corev1.LabelTopologyZone

// simNode is one node of the randomized cluster with its ground truth.
type simNode struct {
	spec  experiment.NodeSpec
	kind  string
	zone  string
	truth oracle.Host
}

// randPod is one pod of the randomized workload, as its user wrote it.
type randPod struct {
	name            string
	image           experiment.Image
	request, qemu   string
	zones           []string // required zone In zones
	notHosts        []string // required hostname NotIn notHosts
	archSelector    string   // nodeSelector kubernetes.io/arch
	milliCPU, memMi int64
}

// randomNodes draws n nodes: one of each kind first, then random kinds.
func randomNodes(r *rand.Rand, n int) []simNode {
	nodes := make([]simNode, 0, n)
	for i := range n {
		k := nodeKinds[i%len(nodeKinds)]
		if i >= len(nodeKinds) {
			k = nodeKinds[r.IntN(len(nodeKinds))]
		}
		nodes = append(nodes, simNode{
			spec: experiment.NodeSpec{Name: fmt.Sprintf("n%02d-%s", i, k.name), Arch: k.arch,
				MilliCPU: []int64{8000, 16000}[r.IntN(2)], MemMi: []int64{16384, 32768}[r.IntN(2)]},
			kind: k.name,
			zone: zones[r.IntN(len(zones))],
		})
	}
	return nodes
}

// randomPods draws n pods over the images, requests and the nodes' names
// and zones.
func randomPods(r *rand.Rand, n int, nodes []simNode) []randPod {
	pods := make([]randPod, 0, n)
	for i := range n {
		p := randPod{name: fmt.Sprintf("rp-%04d", i), milliCPU: 100 + 100*r.Int64N(10), memMi: 128 + 128*r.Int64N(16)}
		switch k := r.IntN(100); {
		case k < 15: // nothing but an image
			p.image = image([]string{"rand/multi", "rand/riscv", "rand/cross"}[r.IntN(3)])
		case k < 35: // variants
			p.image = image([]string{"rand/x86-v3", "rand/variants", "rand/rva23"}[r.IntN(3)])
		case k < 45: // the image's config label declares the ISA
			p.image = image([]string{"rand/rvv-label", "rand/thead-label"}[r.IntN(2)])
		case k < 85:
			p.image = image("rand/multi")
			p.request = randomRequests[r.IntN(len(randomRequests))]
			if r.IntN(10) == 0 {
				first, _, _ := strings.Cut(p.request, "|")
				alt, err := oracle.Parse(first)
				if err != nil {
					panic(err)
				}
				p.archSelector = alt.Arch
			}
		default:
			p.image = image("rand/cross")
			p.qemu = randomQEMU[r.IntN(len(randomQEMU))]
		}
		switch u := r.IntN(100); {
		case u < 15:
			z := slices.Clone(zones)
			r.Shuffle(len(z), func(i, j int) { z[i], z[j] = z[j], z[i] })
			p.zones = z[:1+r.IntN(2)]
			slices.Sort(p.zones)
		case u < 25:
			for range 3 {
				p.notHosts = append(p.notHosts, nodes[r.IntN(len(nodes))].spec.Name)
			}
		}
		pods = append(pods, p)
	}
	return pods
}

// Pod builds the pod the user submits.
func (p randPod) Pod(namespace, registry string) *corev1.Pod {
	w := testbed.MakePod(p.name, namespace).Image(registry+"/"+p.image.Repo+":"+p.image.Tag).
		Request(fmt.Sprintf("%dm", p.milliCPU), fmt.Sprintf("%dMi", p.memMi))
	if p.request != "" {
		w = w.Annotation(isa.BareRequestAnnotation, p.request)
	}
	if p.qemu != "" {
		w = w.Annotation(isa.BareQEMUAnnotation, p.qemu)
	}
	if len(p.zones) > 0 {
		w = w.NodeAffinity(zoneLabel, corev1.NodeSelectorOpIn, p.zones...)
	}
	if len(p.notHosts) > 0 {
		w = w.NodeAffinity(corev1.LabelHostname, corev1.NodeSelectorOpNotIn, p.notHosts...)
	}
	if p.archSelector != "" {
		w = w.NodeSelector(corev1.LabelArchStable, p.archSelector)
	}
	pod := w.Obj()
	pod.Spec.TerminationGracePeriodSeconds = new(int64)
	return pod
}

// userAllows reports whether the pod's own constraints admit n (the
// labels the node was created with: zone, hostname, arch).
func (p randPod) userAllows(n simNode) bool {
	if len(p.zones) > 0 && !slices.Contains(p.zones, n.zone) {
		return false
	}
	if slices.Contains(p.notHosts, n.spec.Name) {
		return false
	}
	return p.archSelector == "" || p.archSelector == n.spec.Arch
}

// platformNeed is what one image platform needs natively, as internal/oracle
// reads it: the architecture's base only for a platform without variant
// (isamatch's documented convention: distros' baseline images run on any
// node of the architecture), else the variant; plus the config label
// isa.request.
type platformNeed struct {
	plain bool
	isa   oracle.ISA
	label []oracle.ISA // alternatives of the config label, nil if none
}

func needs(img experiment.Image) []platformNeed {
	var out []platformNeed
	for _, p := range img.Platforms {
		i, err := oracle.FromPlatform(p.OS, p.Architecture, p.Variant)
		if err != nil {
			panic(fmt.Sprintf("image %s platform %s/%s/%s: %v", img.Repo, p.OS, p.Architecture, p.Variant, err))
		}
		pn := platformNeed{plain: p.Variant == "", isa: i}
		if l := p.Labels[isa.BareImageRequestLabel]; l != "" {
			alts, err := oracle.ParseRequest(l)
			if err != nil {
				panic(fmt.Sprintf("image %s label %q: %v", img.Repo, l, err))
			}
			pn.label = alts
		}
		out = append(out, pn)
	}
	return out
}

// combos are the native ISAs a node may satisfy to run the pod: one per
// (platform, request alternative) of the same architecture; an image's
// label stands for the request when the pod has none. A platform without
// variant needs its architecture's base ISA (the paper's base-ISA tasks
// have the single module I), which is also what its fit is ranked by.
func (p randPod) combos() []oracle.ISA {
	var reqAlts []oracle.ISA
	if p.request != "" {
		alts, err := oracle.ParseRequest(p.request)
		if err != nil {
			panic(err)
		}
		reqAlts = alts
	}
	var out []oracle.ISA
	for _, pn := range needs(p.image) {
		alts := reqAlts
		if alts == nil {
			alts = pn.label
		}
		if alts == nil {
			out = append(out, pn.isa)
			continue
		}
		for _, a := range alts {
			if a.Arch != pn.isa.Arch {
				continue
			}
			if pn.plain {
				out = append(out, a)
				continue
			}
			out = append(out, oracle.Union(pn.isa, a))
		}
	}
	return out
}

// claimsISA reports whether the pod names an ISA beyond an architecture
// (a request, isa.qemu, a variant or a config label).
func (p randPod) claimsISA() bool {
	if p.request != "" || p.qemu != "" {
		return true
	}
	for _, pn := range needs(p.image) {
		if !pn.plain || pn.label != nil {
			return true
		}
	}
	return false
}

// fit is the oracle: whether n can run p, and how well (higher is better):
// 2 for emulating p's isa.qemu while running its image natively (the paper's
// QEMU flow puts those first), else the paper's instruction affinity
// |need| / |node| of the best need n satisfies natively. User constraints
// are not part of fit.
func fit(p randPod, n simNode) (ok bool, score float64) {
	native := n.truth.Native
	if p.qemu != "" {
		q, err := oracle.Parse(p.qemu)
		if err != nil {
			panic(err)
		}
		imageNative := false
		for _, c := range p.combos() {
			imageNative = imageNative || oracle.Satisfies(native, c)
		}
		for _, e := range n.truth.Emulated {
			if imageNative && oracle.Satisfies(e, q) {
				return true, 2
			}
		}
		if !imageNative || !oracle.Satisfies(native, q) {
			return false, 0
		}
		return true, oracle.Affinity(native, q)
	}
	for _, c := range p.combos() {
		if oracle.Satisfies(native, c) {
			ok = true
			score = max(score, oracle.Affinity(native, c))
		}
	}
	return ok, score
}

// room tracks what is left on each node.
type room struct {
	cpu, mem map[string]int64
	pods     map[string]int
}

func newRoom() *room {
	return &room{cpu: map[string]int64{}, mem: map[string]int64{}, pods: map[string]int{}}
}

func (r *room) fits(p randPod, n simNode) bool {
	return r.cpu[n.spec.Name]+p.milliCPU <= n.spec.MilliCPU && r.mem[n.spec.Name]+p.memMi <= n.spec.MemMi &&
		r.pods[n.spec.Name]+1 <= 110
}

// usage is n's CPU and memory in use, in percent.
func (r *room) usage(n simNode) string {
	if n.spec.MilliCPU == 0 || n.spec.MemMi == 0 {
		return "no node"
	}
	return fmt.Sprintf("cpu %d%% mem %d%%", 100*r.cpu[n.spec.Name]/n.spec.MilliCPU, 100*r.mem[n.spec.Name]/n.spec.MemMi)
}

func (r *room) add(p randPod, node string) {
	r.cpu[node] += p.milliCPU
	r.mem[node] += p.memMi
	r.pods[node]++
}

// verdict is the oracle's judgement of a whole run.
type verdict struct {
	Pods, Scheduled, Unscheduled int
	// Wrong: on a node that cannot run the pod. Widened: on a node the
	// user's own constraints exclude. Stranded: unscheduled although a node
	// that can run it, within the user's constraints, has room.
	Wrong, Widened, Stranded []string
	// StrandedOn names, per stranded pod, every node that can run it,
	// within the user's constraints, and has room.
	StrandedOn map[string][]string
	// Eligible pods had a feasible node with room when they were bound;
	// BestFit of them went to a highest-fit node of their architecture.
	Eligible, BestFit int
	OffBestFit        []string
	// OffBestFitPods names the pods of OffBestFit.
	OffBestFitPods []string
	// InFlight of the OffBestFit pods had no room left on their best node
	// once the pods bound to it within the next inFlightWindow bindings are
	// counted: the scheduler may already have assumed those there when it
	// placed this pod (binding is asynchronous, so the watch's order can
	// trail the scheduler's by a few pods).
	InFlight int
}

// inFlightWindow is how many later bindings may have been scheduled before
// a pod whose binding the watch saw first.
const inFlightWindow = 16

// inFlightFill returns a description when the pods bound to best within the
// next inFlightWindow bindings leave no room for p, "" otherwise.
func inFlightFill(seq *room, byPod map[string]randPod, placed map[string]string, next []string, p randPod, best simNode) string {
	r := &room{cpu: maps.Clone(seq.cpu), mem: maps.Clone(seq.mem), pods: maps.Clone(seq.pods)}
	var names []string
	for _, name := range first(next, inFlightWindow) {
		if placed[name] != best.spec.Name {
			continue
		}
		r.add(byPod[name], best.spec.Name)
		names = append(names, name)
		if !r.fits(p, best) {
			return fmt.Sprintf("full once %s, bound just after, are counted", strings.Join(names, ", "))
		}
	}
	return ""
}

// judge scores final placements (pod name -> node, "" if unscheduled).
// bindOrder lists bound pods in the order the scheduler bound them; best
// fit replays it, tracking room from empty nodes, so each pod is judged
// against the nodes that had room at its moment.
func judge(nodes []simNode, pods []randPod, placed map[string]string, bindOrder []string) verdict {
	byNode := map[string]simNode{}
	for _, n := range nodes {
		byNode[n.spec.Name] = n
	}
	byPod := map[string]randPod{}
	for _, p := range pods {
		byPod[p.name] = p
	}
	v := verdict{Pods: len(pods)}
	final := newRoom()
	for _, p := range pods {
		node := placed[p.name]
		if node == "" {
			continue
		}
		v.Scheduled++
		final.add(p, node)
		n := byNode[node]
		if ok, _ := fit(p, n); !ok {
			v.Wrong = append(v.Wrong, fmt.Sprintf("%s(%s)->%s(%s)", p.name, p.describe(), node, n.kind))
		}
		if !p.userAllows(n) {
			v.Widened = append(v.Widened, fmt.Sprintf("%s(zones %v, not %v, arch %q)->%s(%s)", p.name, p.zones, p.notHosts, p.archSelector, node, n.zone))
		}
	}
	for _, p := range pods {
		if placed[p.name] != "" {
			continue
		}
		v.Unscheduled++
		for _, n := range nodes {
			if ok, _ := fit(p, n); ok && p.userAllows(n) && final.fits(p, n) {
				if len(v.StrandedOn[p.name]) == 0 {
					v.Stranded = append(v.Stranded, fmt.Sprintf("%s(%s) fits %s(%s)", p.name, p.describe(), n.spec.Name, n.kind))
				}
				if v.StrandedOn == nil {
					v.StrandedOn = map[string][]string{}
				}
				v.StrandedOn[p.name] = append(v.StrandedOn[p.name], n.spec.Name)
			}
		}
	}
	seq := newRoom()
	for i, name := range bindOrder {
		p, node := byPod[name], placed[name]
		got := byNode[node]
		// Best is judged within the bound node's architecture: alternatives
		// of different architectures are equally acceptable to the user, and
		// isamatch compares affinity within an architecture. Emulating an
		// isa.qemu need comes first on any architecture (the paper's flow).
		best, eligible, bestNode := -1.0, false, ""
		for _, n := range nodes {
			ok, s := fit(p, n)
			if !ok || !p.userAllows(n) || !seq.fits(p, n) {
				continue
			}
			eligible = true
			if (n.spec.Arch == got.spec.Arch || s >= 2) && s > best {
				best, bestNode = s, n.spec.Name
			}
		}
		if eligible {
			v.Eligible++
			if ok, s := fit(p, got); ok && s >= best-1e-9 {
				v.BestFit++
			} else {
				v.OffBestFitPods = append(v.OffBestFitPods, p.name)
				inFlight := ""
				if filledBy := inFlightFill(seq, byPod, placed, bindOrder[i+1:], p, byNode[bestNode]); filledBy != "" {
					v.InFlight++
					inFlight = "; " + filledBy
				}
				v.OffBestFit = append(v.OffBestFit, fmt.Sprintf("%s(%s)->%s(%s, %s) fit %.2f < best %.2f on %s (%s)%s",
					p.name, p.describe(), node, got.kind, seq.usage(got), s, best, bestNode, seq.usage(byNode[bestNode]), inFlight))
			}
		}
		seq.add(p, node)
	}
	return v
}

// describe is the pod's ISA claim for messages.
func (p randPod) describe() string {
	parts := []string{p.image.Repo}
	if p.request != "" {
		parts = append(parts, "request "+p.request)
	}
	if p.qemu != "" {
		parts = append(parts, "qemu "+p.qemu)
	}
	return strings.Join(parts, ", ")
}

func (v verdict) BestFitRate() float64 {
	if v.Eligible == 0 {
		return 0
	}
	return float64(v.BestFit) / float64(v.Eligible)
}
