package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/rebalancecluster"
	"github.com/isamatch/isamatch/pkg/isa"
)

// rebalanceScene names the rebalancing scene in -scenarios.
const rebalanceScene = "rebalance"

// The rebalancing scene's workload: imfdReplicas rv64imfd replicas of
// imfdCPU each (they fit in the two imfd nodes once the filler is gone)
// and vecReplicas rv64imfdv replicas, whose best tier is the vector nodes.
const (
	rebalanceNS  = "rebalance-demo"
	imfdApp      = "imfd"
	vecApp       = "vec"
	imfdReplicas = 8
	vecReplicas  = 2
	imfdCPU      = "350m"
	vecCPU       = "500m"
)

// rebalanceNodes are two best-fit nodes for rv64imfd replicas and two
// richer vector nodes, twice their size.
var rebalanceNodes = []rebalancecluster.Node{
	{Name: "imfd-1", ISA: "rv64imfd", CPU: "4"},
	{Name: "imfd-2", ISA: "rv64imfd", CPU: "4"},
	{Name: "imfdv-1", ISA: "rv64imfdv", CPU: "8"},
	{Name: "imfdv-2", ISA: "rv64imfdv", CPU: "8"},
}

// rebalanceResult is what one rebalancing cycle did.
type rebalanceResult struct {
	// Nodes are the scene's nodes in order; Before and After count each
	// app's replicas per node before and after the cycle.
	Nodes         []rebalancecluster.Node
	Before, After map[string]map[string]int // app -> node -> replicas
	// Evicted counts the evictions until every replica was in place,
	// Cycles the cycles that took; AfterSettled the evictions of one more
	// cycle after that, Undone the evicted pods that were replacements of
	// evicted ones (both should be 0).
	Evicted, Cycles, AfterSettled, Undone int
	// Took is the cycles' wall time, Log the last rebalancer log file.
	Took time.Duration
	Log  string
	// Decision is the isamatch decision of one rv64imfd replica before
	// the cycle, for failure reports; Undecided counts the replicas
	// admitted without one (the webhook's failurePolicy is Ignore).
	Decision  string
	Undecided int
}

// rebalanceDemo runs the scene: the imfd nodes are filled, the rv64imfd
// replicas land on the vector nodes, the filler goes, and rebalancer
// cycles run with the shipped policy until every replica is on a best-fit
// node (at most maxSceneCycles), then one more. It prints the before/after
// table and returns what missed the target: every rv64imfd replica on an
// imfd node, each moved once, none moved back or again, the rv64imfdv
// replicas untouched.
func rebalanceDemo(ctx context.Context, stdout, progress io.Writer) (failures []string, err error) {
	cl, err := rebalancecluster.Start(ctx, rebalancecluster.Options{
		Nodes: rebalanceNodes, Namespace: rebalanceNS, Image: "demo/riscv", Progress: progress,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := cl.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("tear down: %w", stopErr)
		}
	}()
	res, err := rebalanceCycle(ctx, cl, progress)
	if err != nil {
		return nil, fmt.Errorf("scene %s: %w\n%s", rebalanceScene, err, cl.LogTails(20))
	}
	printRebalance(stdout, res)
	failures = rebalanceVerdict(res)
	if len(failures) > 0 {
		// What the rebalancer saw: its log's tail and a replica's decision.
		log, _ := os.ReadFile(res.Log)
		failures = append(failures, fmt.Sprintf("%s: an rv64imfd replica's decision: %s; rebalancer log %s ends:\n%s",
			rebalanceScene, res.Decision, res.Log, tail(string(log), 15)))
	}
	return failures, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func rebalanceCycle(ctx context.Context, cl *rebalancecluster.Cluster, progress io.Writer) (rebalanceResult, error) {
	c := cl.Client
	res := rebalanceResult{Nodes: rebalanceNodes}
	var fillers []*corev1.Pod
	for _, n := range []string{"imfd-1", "imfd-2"} {
		p := fillerPod(n, cl.ImageRef())
		if err := c.Create(ctx, p); err != nil {
			return res, fmt.Errorf("create filler: %w", err)
		}
		fillers = append(fillers, p)
	}
	for _, obj := range []client.Object{
		replicaDeployment(imfdApp, "rv64imfd", imfdCPU, imfdReplicas, cl.ImageRef()),
		replicaDeployment(vecApp, "rv64imfdv", vecCPU, vecReplicas, cl.ImageRef()),
		&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: imfdApp, Namespace: rebalanceNS},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MaxUnavailable: new(intstr.FromInt32(1)),
				Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": imfdApp}},
			},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return res, fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
	}
	before, err := waitSettled(ctx, c, func(pdbAllows int32) bool { return pdbAllows == 1 })
	if err != nil {
		return res, fmt.Errorf("replicas before the cycle: %w", err)
	}
	res.Before = countByNode(before)
	for _, p := range before {
		if p.Labels["app"] != imfdApp {
			continue
		}
		res.Decision = p.Annotations[isa.DecisionAnnotation]
		if res.Decision == "" {
			res.Undecided++
		}
	}
	for _, p := range fillers {
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
			return res, fmt.Errorf("delete filler: %w", err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(rebalanceNS), client.MatchingLabels{"app": "filler"}); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
	if err != nil {
		return res, fmt.Errorf("wait for the filler to go: %w", err)
	}

	// A pod younger than the policy's minPodAge is not moved: the cycles
	// start once every replica is older.
	if err := rebalancecluster.WaitOlderThan(ctx, before, sceneMinPodAge, time.Minute); err != nil {
		return res, fmt.Errorf("wait for the replicas to be %s old: %w", sceneMinPodAge, err)
	}
	policy, err := cl.Policy("policy.yaml", map[string]any{
		"maxEvictionsPerCycle": imfdReplicas, "maxEvictionsPerNode": imfdReplicas, "minPodAge": sceneMinPodAge.String(),
	})
	if err != nil {
		return res, err
	}
	rec, err := rebalancecluster.StartRecorder(ctx, c, rebalanceNS, imfdApp)
	if err != nil {
		return res, err
	}
	defer rec.Stop()
	// Each cycle moves what the budget allows within its disruption wait:
	// on a slow machine that may take more than one. The scene ends when
	// every replica with a better node has moved, within maxSceneCycles.
	var after []corev1.Pod
	for res.Cycles < maxSceneCycles {
		res.Cycles++
		fmt.Fprintf(progress, "demo: %s: rebalancer cycle %d ...\n", rebalanceScene, res.Cycles)
		took, log, err := cl.RunCycle(ctx, policy, fmt.Sprintf("demo-%d", res.Cycles))
		res.Took, res.Log = res.Took+took, log
		if err != nil {
			return res, err
		}
		if after, err = waitSettled(ctx, c, func(pdbAllows int32) bool { return pdbAllows == 1 }); err != nil {
			return res, fmt.Errorf("replicas after cycle %d: %w", res.Cycles, err)
		}
		if misplaced(countByNode(after)) == 0 {
			break
		}
	}
	// One more cycle once the replacements are old enough to be moved:
	// it must find nothing to do.
	if err := rebalancecluster.WaitOlderThan(ctx, after, sceneMinPodAge, time.Minute); err != nil {
		return res, err
	}
	moved := len(rec.Evicted())
	if _, res.Log, err = cl.RunCycle(ctx, policy, "demo-settled"); err != nil {
		return res, err
	}
	if after, err = waitSettled(ctx, c, func(int32) bool { return true }); err != nil {
		return res, fmt.Errorf("replicas after the settled cycle: %w", err)
	}
	res.After = countByNode(after)
	evicted := rec.Evicted()
	res.Evicted, res.AfterSettled = moved, len(evicted)-moved
	original := map[string]bool{}
	for _, p := range before {
		original[p.Name] = true
	}
	for _, name := range evicted {
		if !original[name] {
			res.Undone++
		}
	}
	return res, nil
}

// sceneMinPodAge is the scene's cool-down (the shipped policy's is 5m).
const sceneMinPodAge = time.Second

// maxSceneCycles bounds the cycles the scene may take.
const maxSceneCycles = 5

// misplaced counts the rv64imfd replicas on nodes other than the imfd
// ones.
func misplaced(byNode map[string]map[string]int) int {
	n := 0
	for node, k := range byNode[imfdApp] {
		if !strings.HasPrefix(node, "imfd-") {
			n += k
		}
	}
	return n
}

// waitSettled waits up to 90s until both apps have all their replicas
// Ready, none terminating, and the budget's allowed disruptions satisfy
// pdbOK; it returns the replicas.
func waitSettled(ctx context.Context, c client.Client, pdbOK func(int32) bool) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(rebalanceNS), client.HasLabels{"app"}); err != nil {
			return false, err
		}
		want := map[string]int{imfdApp: imfdReplicas, vecApp: vecReplicas}
		got := map[string]int{}
		pods = pods[:0]
		for _, p := range list.Items {
			if _, ok := want[p.Labels["app"]]; !ok {
				continue
			}
			if p.DeletionTimestamp != nil || !rebalancecluster.IsReady(&p) {
				last = fmt.Sprintf("%s not Ready yet (node %q)", p.Name, p.Spec.NodeName)
				return false, nil
			}
			got[p.Labels["app"]]++
			pods = append(pods, p)
		}
		if got[imfdApp] != imfdReplicas || got[vecApp] != vecReplicas {
			last = fmt.Sprintf("replicas %v, want %v", got, want)
			return false, nil
		}
		var pdb policyv1.PodDisruptionBudget
		if err := c.Get(ctx, client.ObjectKey{Namespace: rebalanceNS, Name: imfdApp}, &pdb); err != nil {
			return false, err
		}
		last = fmt.Sprintf("budget allows %d disruptions", pdb.Status.DisruptionsAllowed)
		return pdbOK(pdb.Status.DisruptionsAllowed), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w (last: %s)", err, last)
	}
	return pods, nil
}

// countByNode counts the pods per app label and node.
func countByNode(pods []corev1.Pod) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, p := range pods {
		app := p.Labels["app"]
		if out[app] == nil {
			out[app] = map[string]int{}
		}
		out[app][p.Spec.NodeName]++
	}
	return out
}

// printRebalance writes the before/after table.
func printRebalance(w io.Writer, r rebalanceResult) {
	fmt.Fprintf(w, "rebalancing: %d rv64imfd replicas (PDB maxUnavailable 1) placed while the imfd nodes were full, then the filler went;\n", imfdReplicas)
	fmt.Fprintf(w, "rebalancer cycles (%s, ISAFit limits raised to %d, minPodAge %s; the scheduler's default configuration):\n", rebalancecluster.PolicyFile, imfdReplicas, sceneMinPodAge)
	fmt.Fprintf(w, "%-8s %-10s %4s %15s %14s %16s %15s\n", "node", "isa", "cpu", "rv64imfd before", "rv64imfd after", "rv64imfdv before", "rv64imfdv after")
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "%-8s %-10s %4s %15d %14d %16d %15d\n", n.Name, n.ISA, n.CPU,
			r.Before[imfdApp][n.Name], r.After[imfdApp][n.Name], r.Before[vecApp][n.Name], r.After[vecApp][n.Name])
	}
	fmt.Fprintf(w, "evictions: %d in %d cycle(s), %.1fs; one more cycle evicted %d; replacements evicted again: %d\n", r.Evicted, r.Cycles, r.Took.Seconds(), r.AfterSettled, r.Undone)
}

// rebalanceVerdict lists what the cycle missed: an rv64imfd replica left
// on a vector node, a vector replica moved, or more evictions than
// replicas that had somewhere better to go.
func rebalanceVerdict(r rebalanceResult) []string {
	var out []string
	if r.Undecided > 0 {
		out = append(out, fmt.Sprintf("%s: %d of %d rv64imfd replicas were admitted without isamatch's decision (the webhook did not answer in time; its failurePolicy is Ignore), so they had no better tier",
			rebalanceScene, r.Undecided, imfdReplicas))
	}
	left, movable := misplaced(r.After), misplaced(r.Before)
	if left > 0 {
		out = append(out, fmt.Sprintf("%s: %d of %d rv64imfd replicas still on a vector node after %d cycles", rebalanceScene, left, imfdReplicas, r.Cycles))
	}
	if r.Evicted != movable {
		out = append(out, fmt.Sprintf("%s: %d evictions, want %d (the rv64imfd replicas that had a better node)", rebalanceScene, r.Evicted, movable))
	}
	if r.AfterSettled > 0 || r.Undone > 0 {
		out = append(out, fmt.Sprintf("%s: the rebalancer did not stay put: %d evictions in the cycle after the moves, %d replacements evicted again", rebalanceScene, r.AfterSettled, r.Undone))
	}
	return out
}

// fillerPod is a bare pod bound to node that requests all of its 4 CPUs
// and that the webhook leaves alone.
func fillerPod(node, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "filler-" + node, Namespace: rebalanceNS, Labels: map[string]string{"app": "filler", isa.IgnoreLabel: "true"}},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: image, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			}}},
		},
	}
}

// replicaDeployment is a Deployment of n pods labelled app=app asking for
// request natively, each requesting cpu.
func replicaDeployment(app, request, cpu string, n int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: rebalanceNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{isa.RequestAnnotation: request}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image, Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
				}}}},
			},
		},
	}
}
