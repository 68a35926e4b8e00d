package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/oracle"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The randomized cluster's size and seed.
const (
	randomSeed  = 20260501
	randomNodeN = 60
	randomPodN  = 1000
	// createParallel pods are in flight through admission at once.
	createParallel = 32
)

var _ = Describe("A seeded randomized cluster beyond the paper", Ordered, func() {
	var (
		c     *democluster.Cluster
		nodes []simNode
	)

	BeforeAll(func(ctx SpecContext) {
		repo, err := testbed.RepoRoot()
		Expect(err).NotTo(HaveOccurred())
		r := rand.New(rand.NewPCG(randomSeed, 0xc1))
		nodes = randomNodes(r, randomNodeN)
		// The labeler runs each host root's compilers as an unprivileged
		// user, who must be able to reach them: a TempDir is 0700.
		roots, err := os.MkdirTemp("", "isamatch-random-roots-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, roots)
		Expect(os.Chmod(roots, 0o755)).To(Succeed())
		specs := make([]experiment.NodeSpec, len(nodes))
		kinds := map[string]nodeKind{}
		for _, k := range nodeKinds {
			kinds[k.name] = k
		}
		for i := range nodes {
			dir := filepath.Join(roots, nodes[i].spec.Name)
			Expect(writeHostRoot(repo, dir, kinds[nodes[i].kind])).To(Succeed())
			nodes[i].spec.Fixture = dir
			nodes[i].truth, err = oracle.ReadHost(dir)
			Expect(err).NotTo(HaveOccurred())
			specs[i] = nodes[i].spec
		}
		zoneOf := map[string]string{}
		for _, n := range nodes {
			zoneOf[n.spec.Name] = n.zone
		}
		c = startCluster(ctx, democluster.Options{
			Nodes:       specs,
			ExtraImages: randomImages,
			ExtraNodeLabels: func(n experiment.NodeSpec) map[string]string {
				return map[string]string{zoneLabel: zoneOf[n.Name]}
			},
		})
	}, NodeTimeout(5*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(c.LogTails(40))
		}
	})

	It("has at least 50 nodes of at least 10 distinct ISAs, each labelled as its host root says", func(ctx SpecContext) {
		isas, err := c.NodeISA(ctx)
		Expect(err).NotTo(HaveOccurred())
		// A node with a cross compiler is labelled with what it emulates.
		kinds := map[string]nodeKind{}
		for _, k := range nodeKinds {
			kinds[k.name] = k
		}
		for _, n := range nodes {
			if kinds[n.kind].crossArch == "" {
				continue
			}
			var node corev1.Node
			Expect(c.Client.Get(ctx, client.ObjectKey{Name: n.spec.Name}, &node)).To(Succeed())
			Expect(node.Annotations).To(HaveKeyWithValue(isa.EmuISAAnnotation, Not(BeEmpty())),
				"node %s (%s) has a cross compiler for %s but no emulation ISA", n.spec.Name, n.kind, kinds[n.kind].crossArch)
		}
		distinct := map[string]bool{}
		for _, n := range nodes {
			distinct[n.truth.Native.String()] = true
			label, err := oracle.Parse(isas[n.spec.Name])
			Expect(err).NotTo(HaveOccurred(), "node %s (%s): the oracle cannot read the labeler's ISA", n.spec.Name, n.kind)
			Expect(oracle.Satisfies(n.truth.Native, label)).To(BeTrue(),
				"node %s (%s): the labeler's ISA %s claims more than its host root's cpuinfo", n.spec.Name, n.kind, isas[n.spec.Name])
		}
		Expect(len(nodes)).To(BeNumerically(">=", 50))
		Expect(len(distinct)).To(BeNumerically(">=", 10), "distinct ISAs: %v", distinct)
		AddReportEntry("randomized cluster", fmt.Sprintf("%d nodes, %d distinct native ISAs", len(nodes), len(distinct)))
	})

	It("places 1,000 random pods only where they can run, strands none, widens no user constraint", func(ctx SpecContext) {
		r := rand.New(rand.NewPCG(randomSeed, 0x90d))
		pods := randomPods(r, randomPodN, nodes)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "random-"}}
		Expect(c.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))).To(Succeed())
			Expect(c.Client.Delete(ctx, ns)).To(Succeed())
		})
		Expect(c.PrepareNamespace(ctx, ns.Name)).To(Succeed())

		watched, stopWatch := watchBindOrder(ctx, c, ns.Name)
		start := time.Now()
		objs := make([]*corev1.Pod, len(pods))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(createParallel)
		for i, p := range pods {
			objs[i] = p.Pod(ns.Name, c.Registry.Host)
			g.Go(func() error {
				if err := c.Client.Create(gctx, objs[i]); err != nil {
					return fmt.Errorf("create %s (%s): %w", p.name, p.describe(), err)
				}
				return nil
			})
		}
		Expect(g.Wait()).To(Succeed())
		created := time.Since(start)
		waitCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		Expect(testbed.WaitSettled(waitCtx, c.Client, objs)).To(Succeed())
		settled := time.Since(start)
		// The watch delivers the last bindings after the pods settled:
		// wait, up to 30s, until it has seen every bound pod. It may have
		// been cut and re-opened; what it still misses then is counted
		// and placed last below.
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			w := watched()
			for _, o := range objs {
				if o.Spec.NodeName != "" && !w[o.Name] {
					return false, nil
				}
			}
			return true, nil
		})
		bindOrder, reopened := stopWatch()

		placed := map[string]string{}
		undecided := 0
		for _, o := range objs {
			placed[o.Name] = o.Spec.NodeName
			if o.Annotations[isa.DecisionAnnotation] == "" {
				undecided++
			}
		}
		// Pods the watch missed (it may be cut) go last, in name order.
		seen := map[string]bool{}
		for _, n := range bindOrder {
			seen[n] = true
		}
		missed := 0
		for _, o := range objs {
			if o.Spec.NodeName != "" && !seen[o.Name] {
				bindOrder = append(bindOrder, o.Name)
				missed++
			}
		}
		v := judge(nodes, pods, placed, bindOrder)
		report := fmt.Sprintf("%d pods created in %.1fs, settled in %.1fs: %d scheduled, %d unschedulable; "+
			"wrong %d, stranded %d, widened %d; best fit %d of %d eligible = %.1f%% (bind order from the watch, re-opened %d times, %d pods appended in name order); "+
			"%d of the %d misses had their best node filled by pods bound within the next %d bindings (likely already assumed there by the scheduler)",
			v.Pods, created.Seconds(), settled.Seconds(), v.Scheduled, v.Unscheduled, len(v.Wrong), len(v.Stranded), len(v.Widened),
			v.BestFit, v.Eligible, 100*v.BestFitRate(), reopened, missed, v.InFlight, len(v.OffBestFit), inFlightWindow)
		AddReportEntry("randomized run", report)
		GinkgoWriter.Println(report)
		if len(v.OffBestFit) > 0 {
			byName := map[string]*corev1.Pod{}
			for _, o := range objs {
				byName[o.Name] = o
			}
			var decisions []string
			for _, name := range first(v.OffBestFitPods, 3) {
				decisions = append(decisions, name+": "+byName[name].Annotations[isa.DecisionAnnotation])
			}
			AddReportEntry("randomized run: off best fit", fmt.Sprintf("first 20 of %d:\n  %s\nthe webhook's decisions for the first:\n  %s",
				len(v.OffBestFit), strings.Join(first(v.OffBestFit, 20), "\n  "), strings.Join(decisions, "\n  ")))
		}
		AddReportEntry("randomized run: placements", perKind(nodes, pods, placed))

		Expect(undecided).To(BeZero(), "pods without a decision annotation: the webhook did not see them")
		Expect(v.Wrong).To(BeEmpty(), "pods on a node that cannot run them")
		// A pod unscheduled while a node that can run it has room is
		// isamatch's fault when its admitted required affinity excludes
		// every such node. When the affinity admits one, the scheduler
		// judged that node full at its attempt (other pods assumed or
		// nominated there) and retries only on a later cluster event or
		// after five minutes: reported, and bounded, but not isamatch's.
		byName := map[string]*corev1.Pod{}
		for _, o := range objs {
			byName[o.Name] = o
		}
		excluded, timing, err := splitStranded(ctx, c.Client, byName, v.StrandedOn)
		Expect(err).NotTo(HaveOccurred())
		if len(timing) > 0 {
			AddReportEntry("randomized run: left by the scheduler's timing", strings.Join(timing, "\n"))
		}
		Expect(excluded).To(BeEmpty(), "unscheduled pods that a node could run and had room for, excluded by the affinity isamatch wrote")
		Expect(len(timing)).To(BeNumerically("<=", randomPodN/200), "unscheduled pods whose affinity admits a node with room: more than the scheduler's timing explains")
		Expect(v.Widened).To(BeEmpty(), "pods on a node their own affinity excludes")
		Expect(v.Scheduled).To(BeNumerically(">", v.Pods/2), "most pods should fit: the workload is sized for the cluster")
	}, SpecTimeout(10*time.Minute))
})

// watchBindOrder watches ns's pods and records the order in which they get
// a node, re-opening the watch from the last resource version when the
// server ends it; stop ends the watch and returns the order and how many
// times the watch was re-opened.
func watchBindOrder(ctx context.Context, c *democluster.Cluster, ns string) (seen func() map[string]bool, stop func() (order []string, reopened int)) {
	GinkgoHelper()
	wc, err := client.NewWithWatch(c.CP.Config, client.Options{Scheme: c.CP.Scheme})
	Expect(err).NotTo(HaveOccurred())
	var list corev1.PodList
	Expect(wc.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	rv := list.ResourceVersion
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu     sync.Mutex
		names  []string
		bound  = map[string]bool{}
		reopen = -1
		why    []string
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			reopen++
			w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns),
				&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					if st, isStatus := ev.Object.(*metav1.Status); isStatus && len(why) < 3 {
						why = append(why, st.Message)
					}
					break // an error event: re-open from rv
				}
				rv = p.ResourceVersion
				if p.Spec.NodeName == "" {
					continue
				}
				mu.Lock()
				if !bound[p.Name] {
					bound[p.Name] = true
					names = append(names, p.Name)
				}
				mu.Unlock()
			}
			w.Stop()
		}
	}()
	seen = func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(bound)
	}
	return seen, func() ([]string, int) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(why) > 0 {
			AddReportEntry("pod watch", fmt.Sprintf("ended by the server %d times and re-opened; first reasons: %q", reopen, why))
		}
		return names, reopen
	}
}

// perKind tabulates pods per node kind, for the log.
func perKind(nodes []simNode, pods []randPod, placed map[string]string) string {
	kindOf := map[string]string{}
	for _, n := range nodes {
		kindOf[n.spec.Name] = n.kind
	}
	count := map[string]int{}
	for _, p := range pods {
		k := "unscheduled"
		if n := placed[p.name]; n != "" {
			k = kindOf[n]
		}
		count[k]++
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("pods per node kind:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, count[k])
	}
	return b.String()
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// splitStranded sorts the stranded pods (name -> nodes that can run them
// and have room) into those whose admitted required node affinity matches
// none of those nodes and those whose affinity matches one.
func splitStranded(ctx context.Context, c client.Reader, pods map[string]*corev1.Pod, on map[string][]string) (excluded, timing []string, err error) {
	names := make([]string, 0, len(on))
	for name := range on {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		required := nodeaffinity.GetRequiredNodeAffinity(pods[name])
		admitted := ""
		for _, nodeName := range on[name] {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, &n); err != nil {
				return nil, nil, fmt.Errorf("get node %s: %w", nodeName, err)
			}
			ok, err := required.Match(&n)
			if err != nil {
				return nil, nil, fmt.Errorf("match %s's affinity against %s: %w", name, nodeName, err)
			}
			if ok {
				admitted = nodeName
				break
			}
		}
		if admitted == "" {
			excluded = append(excluded, fmt.Sprintf("%s: room on %v, all excluded by its affinity", name, on[name]))
		} else {
			timing = append(timing, fmt.Sprintf("%s: its affinity admits %s, which has room", name, admitted))
		}
	}
	return excluded, timing, nil
}
